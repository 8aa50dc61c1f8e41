"""Prompt tokens of the first function-call requests of a pipeline request, as the app sends them.

The app's session (web search + EEG tools, the EEG domain) runs the pipeline request against the
scripted OpenAI-compatible server over HTTP, once with a native model (minimal profile) and once
with a prompt-mode model (guided: the record of the request, then its first decide request after
brainchat's listing). Each request is counted as it arrived at the server: messages, tool
definitions and any response schema (tiktoken cl100k, the app's own estimate). The baseline, built
in the same run, is the request as it was before tools were offered by the study's state: every
tool's definition sent (native) or described in the prompt (prompt mode). Target: <= 1,500.

    .venv/bin/python bench/tool_tokens.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

QUESTION = (
    "Load the first two files, band-pass 8-30 Hz, epoch 0.5-2.5 s, split by trial, "
    "train CSP+LDA, test accuracy?"
)
TARGET = 1500


def request_tokens(request: Any) -> int:
    """The prompt tokens of a request as the server saw it: each message's text and framing,
    and the tool definitions sent natively (a reply's JSON schema is no prompt: the server
    turns it into a grammar that holds the reply; `schema_tokens` counts it apart)."""
    from brainchat.usage import count_tokens

    total = 3 + sum(4 + count_tokens(str(m.get("content") or "")) for m in request.messages)
    if request.tools:
        total += count_tokens(json.dumps(request.tools, separators=(",", ":")))
    return total


def schema_tokens(request: Any) -> int:
    from brainchat.usage import count_tokens

    fmt = request.params.get("response_format")
    return count_tokens(json.dumps(fmt, separators=(",", ":"))) if fmt else 0


async def run(server: Any, data: Path, tool_calling: str) -> list[Any]:
    """The pipeline request in a fresh session; the function-call model's requests."""
    from brainchat.session import Session
    from brainchat.settings import Settings
    from brainchat.testing.scripted_server import Text

    from support import record, spec

    fc = spec(server, f"fc-{tool_calling}", tool_calling=tool_calling)
    ans = spec(server, f"ans-{tool_calling}")
    if tool_calling == "prompt":  # the record of the request as it is written
        steps = ["load", "preprocess", "epoch", "split", "train", "evaluate"]
        fixed = {
            "bandpass_filter": {"l_freq": 8, "h_freq": 30},
            "epoch_data": {"tmin": 0.5, "tmax": 2.5},
            "split_dataset": {"by": "trial"},
            "train_model": {"model": "csp_lda"},
        }
        server.queue(fc.model, record(steps, positions=[1, 2], fixed=fixed))
    server.queue(fc.model, Text("Nothing more."))
    server.queue(ans.model, Text("Stopped."))
    settings = Settings(
        function_call_model=fc, answer_model=ans, data_dir=data, default_mode="agent"
    )
    session = Session(settings)
    session.set_mode("agent")
    async for _ in session.ask(QUESTION):
        pass
    return server.requests_for(fc.model)


def described_as_before(schemas: list[dict[str, Any]]) -> str:
    """Every tool described as prompt mode did before: its description and its JSON schema."""
    from brainchat.agent.toolsprompt import FENCED_HOW, slim

    lines = ["You can call these tools (name: description; arguments as a JSON schema):"]
    for schema in schemas:
        fn = schema["function"]
        desc = " ".join(str(fn.get("description") or "").split())[:300]
        params = json.dumps(slim(fn.get("parameters") or {}), separators=(",", ":"))
        lines.append(f"- {fn['name']}: {desc}\n  {params}")
    return "\n".join([*lines, "", *FENCED_HOW])


def baseline(data: Path) -> tuple[int, int, int]:
    """(every tool offered natively, every tool described in the prompt as before, how many)."""
    from brainchat.eeg.study.study import Study
    from brainchat.prompts import load_prompt
    from brainchat.session.toolbox import local_toolset
    from brainchat.settings import Settings
    from brainchat.tools.schemas import openai_schema
    from brainchat.usage import count_message_tokens, tools_tokens

    settings = Settings(data_dir=data)
    schemas = [openai_schema(t) for t in local_toolset(settings, Study(data), {}).tools]
    system = load_prompt("function_call").replace("{study}", "Current EEG study: empty")
    base = count_message_tokens([SystemMessage(system), HumanMessage(QUESTION)])
    described = SystemMessage(system + "\n\n" + described_as_before(schemas))
    prompt = count_message_tokens([described, HumanMessage(QUESTION)])
    return base + tools_tokens(schemas), prompt, len(schemas)


async def main() -> None:
    from brainchat.eeg.io.synthetic import write_demo_set
    from brainchat.testing.scripted_server import ScriptedServer

    data = Path(tempfile.mkdtemp()) / "data"
    write_demo_set(data / "demo", subjects=1, sessions=2, trials=8, seed=1)
    with ScriptedServer() as server:
        native = await run(server, data, "native")
        prompt = await run(server, data, "prompt")
    all_native, all_prompt, count = baseline(data)
    first_native = request_tokens(native[0])
    offered = len(native[0].tools or [])
    record_req, first_decide = request_tokens(prompt[0]), request_tokens(prompt[1])
    print(f'pipeline request: "{QUESTION}"')
    print(f"native, minimal profile: first request {first_native:,} tokens ({offered} of {count} tools offered)")  # fmt: skip
    print(f"  baseline, every tool offered: {all_native:,} tokens; ratio {first_native / all_native:.2f}")  # fmt: skip
    print(f"prompt, guided profile: record request {record_req:,} tokens; first decide request {first_decide:,} tokens")  # fmt: skip
    print(f"  reply schemas (grammars, not prompt): record {schema_tokens(prompt[0]):,}, decide {schema_tokens(prompt[1]):,} tokens")  # fmt: skip
    print(f"  baseline, every tool described by its JSON schema: {all_prompt:,} tokens; ratio {first_decide / all_prompt:.2f}")  # fmt: skip
    worst = max(first_native, record_req, first_decide)
    print(f"largest first request {worst:,} tokens: {'within' if worst <= TARGET else 'OVER'} the {TARGET:,} target")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
