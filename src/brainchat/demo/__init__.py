"""`brainchat --demo`: the app with scripted models, offline: no key and no second terminal.

The scripted OpenAI-compatible server (`brainchat.testing.scripted_server`) starts inside the
app's process on a free port, serving `examples/scripted_demo.json`; the three model variables
point at it and web search reads `examples/search_fixture.json`. Real environment variables for
models are replaced for this process only: a demo never calls a paid model.
"""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from brainchat.resources import ROOT

SCRIPT = ROOT / "examples" / "scripted_demo.json"
SEARCH_FIXTURE = ROOT / "examples" / "search_fixture.json"
DEMO_ENV = "BRAINCHAT_DEMO"  # set while the demo runs, so the welcome can explain the tour
MODELS = {
    "CHAT_MODEL": "demo-chat",
    "AGENT_FUNCTION_CALL_MODEL": "demo-agent",
    "AGENT_ANSWER_MODEL": "demo-answer",
}


def start(env: MutableMapping[str, str] | None = None, script: Path = SCRIPT) -> Any:
    """Start the scripted server and point this process's model settings at it; returns it."""
    from brainchat.testing.scripted_server import ScriptedServer

    env = os.environ if env is None else env
    server = ScriptedServer(0, script=script).start()
    for var, model in MODELS.items():
        env[var] = json.dumps(
            {
                "provider": "openai-compatible",
                "model": model,
                "base_url": server.base_url,
                "api_key": "demo",
            }
        )
    env["BRAINCHAT_SEARCH_FIXTURE"] = str(SEARCH_FIXTURE)
    # The tour trains EEGNet on a CPU: on a busy machine that outlasts the default 60 s.
    env.setdefault("AGENT_MAX_EXECUTION_TIME", "300")
    env[DEMO_ENV] = "1"
    return server


def active() -> bool:
    return os.environ.get(DEMO_ENV) == "1"


WELCOME = (
    "🎬 **Demo mode**: scripted models answer (offline, no key, no cost) and web search reads a "
    "fixture file. The script follows a short tour: in **Chat** ask anything; switch to "
    "**Agent** and ask about motor imagery (it searches and cites its sources); then write the "
    "demo EEG set and ask the agent to *train a decoder on it* (it loads, filters, epochs, "
    "trains EEGNet and shows the figures)."
)
