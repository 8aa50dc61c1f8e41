"""`brainchat --demo`: the app with scripted models, offline: no key and no second terminal.

The scripted OpenAI-compatible server (`brainchat.testing.scripted_server`) starts inside the
app's process on a free port; `replies.respond` picks each reply from what the request asks
(the question, the tools already run this turn, their results), so every conversation, a New
chat and a question asked twice get the same kind of answer; `examples/scripted_demo.json` holds
the server's settings. The three model variables point at it and web search reads
`examples/search_fixture.json`. Real environment variables for models are replaced for this
process only: a demo never calls a paid model. Its conversations are kept apart, in
`<state folder>/demo` (its own SQLite database), so they never mix with the real app's threads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from brainchat.resources import ROOT

SCRIPT = ROOT / "examples" / "scripted_demo.json"
SEARCH_FIXTURE = ROOT / "examples" / "search_fixture.json"
DEMO_ENV = "BRAINCHAT_DEMO"  # set while the demo runs, so the welcome can explain the tour
APART_ENV = "BRAINCHAT_DEMO_STATE_DIR"  # the demo's own state folder, once `keep_apart` chose it
LOOPBACK_ONLY = (
    "the demo listens on 127.0.0.1 only: it runs without login, in a state folder of its own "
    "that has no accounts"
)
MODELS = {
    "CHAT_MODEL": "demo-chat",
    "AGENT_FUNCTION_CALL_MODEL": "demo-agent",
    "AGENT_ANSWER_MODEL": "demo-answer",
}


def pace(env: Mapping[str, str]) -> float:
    """BRAINCHAT_DEMO_PACE from `env` over `.env` (1 when unset); a ConfigError naming it when
    it is not a number from 0 to 10."""
    from brainchat.settings.declared import DemoVars
    from brainchat.settings.fields import check, env_name
    from brainchat.settings.load import read_env

    name = env_name(DemoVars, "demo_pace")
    raw = {**read_env(), **env}.get(name, "").strip()
    return float(check(DemoVars, "demo_pace", raw)) if raw else 1.0


def start(env: MutableMapping[str, str] | None = None, script: Path = SCRIPT) -> Any:
    """Start the scripted server (at BRAINCHAT_DEMO_PACE) and point this process's model
    settings at it; returns it. A bad pace raises ConfigError before anything starts."""
    from brainchat.demo.replies import respond
    from brainchat.testing.scripted_server import ScriptedServer

    env = os.environ if env is None else env
    speed = pace(env)
    keep_apart(env)
    server = ScriptedServer(0, script=script, responder=respond, pace=speed).start()
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


def keep_apart(env: MutableMapping[str, str]) -> Path:
    """Point the state folder (threads, files, auth secret) at `<state folder>/demo`, with its
    own SQLite database even where DATABASE_URL names a shared one, and login off (the real
    app's accounts are not in it); returns that folder. Calling it again keeps that folder."""
    from brainchat.store.config import AUTH_ENV, DB_ENV, STATE_ENV, load_store_config, read_env

    if env.get(APART_ENV):  # already kept apart (the command line does it before `start`)
        return Path(env[APART_ENV])
    folder = load_store_config(read_env() if env is os.environ else env).state_dir / "demo"
    env[STATE_ENV] = str(folder)
    env[DB_ENV] = ""  # empty, not unset: it also hides a DATABASE_URL in .env (the SQLite default)
    env[AUTH_ENV] = "local"
    env[APART_ENV] = str(folder)
    return folder


def active() -> bool:
    return os.environ.get(DEMO_ENV) == "1"


def welcome() -> str:
    """The welcome's demo line, in the current language (i18n `demo.welcome`)."""
    from brainchat import i18n

    return i18n.t("demo.welcome")
