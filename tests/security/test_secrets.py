"""Secrets never echo: config, MCP and EEG path errors name the field and what is allowed, not the value.

Each case puts a secret where a user (or an attacker who wants it in a log) would, then looks for
it everywhere a message goes: the error itself, the start-up log, `brainchat ask` / `ask --json` /
`tools` / `tools --json` run as real processes, and the texts the chat shows (the welcome's
configuration problem, `/tools`).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from brainchat.eeg.io.paths import resolve_in_data_dir
from brainchat.session import Session
from brainchat.settings import load_settings
from brainchat.testing.scripted_server import Call, Text, ToolCalls
from brainchat.tools.mcp import McpHub
from brainchat.ui import format as fmt
from mcp_servers.helpers import free_port

from support import spec_json

BIN = Path(sys.executable).parent / "brainchat"
LEAKY = Path(__file__).resolve().parents[1] / "mcp_servers" / "leaky.py"

SK = "sk-live-4fJ8q2Lr9TzX0bN7vW3y"
GHP = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3poAb12"
XOXB = "xoxb-2048-1024-Qz7LmN4pR8sT"
AKIA = "AKIAQ7ZR4WXY2K6P8M3N"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJicmFpbmNoYXQifQ.c2lnbmF0dXJlLXNlY3JldA"
PLAIN = "hunter2-correct-horse"  # not shaped like any key: only its place gives it away


def run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """`brainchat ARGS` as a real process with only `env` configured; stdout, then stderr."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_", "DEFAULT_"))
    }
    out = subprocess.run(
        [str(BIN), *args],
        env={**clean, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in out.stderr, out.stderr
    return out.stdout + "\n" + out.stderr


def assert_hidden(secrets: list[str], *texts: str) -> None:
    for text in texts:
        for secret in secrets:
            assert secret.lower() not in text.lower(), f"{secret!r} leaked in:\n{text}"


# ---- configuration -------------------------------------------------------------------------

SETTINGS_CASES = {
    "unknown key holding a key": (
        {"CHAT_MODEL": json.dumps({"model": "gpt-4o", "apikey": SK})},
        "CHAT_MODEL.apikey", "known keys", SK),
    "unknown key holding a plain password": (
        {"CHAT_MODEL": json.dumps({"provider": "ollama", "model": "m", "password": PLAIN})},
        "CHAT_MODEL.password", "known keys", PLAIN),
    "broken JSON with api_key near the start": (
        {"CHAT_MODEL": '{"api_key": "' + SK + '", "model": "gpt-4o" "provider": "openai"}'},
        "CHAT_MODEL", "line 1 column", SK),
    "broken JSON with an unknown key near the error": (
        {"CHAT_MODEL": '{"provider": "ollama", "pass": "' + PLAIN + '", model: "m"}'},
        "CHAT_MODEL", "line 1 column", PLAIN),
    "key pasted as the model name": (
        {"CHAT_MODEL": SK, "OPENAI_API_KEY": "test-key"}, "CHAT_MODEL.model", "model name", SK),
    "GitHub token as the model in a spec": (
        {"AGENT_FUNCTION_CALL_MODEL": json.dumps({"provider": "ollama", "model": GHP})},
        "AGENT_FUNCTION_CALL_MODEL.model", "model name", GHP),
    "base_url with credentials": (
        {"CHAT_MODEL": json.dumps({"model": "m", "base_url": f"ftp://admin:{PLAIN}@llm.example/v1"})},
        "CHAT_MODEL.base_url", "http://", PLAIN),
    "base_url with ?api_key=": (
        {"CHAT_MODEL": json.dumps({"model": "m", "base_url": "htps://llm.example/v1?api_key=q9Wm2Lk7"})},
        "CHAT_MODEL.base_url", "http://", "q9Wm2Lk7"),
    "OPENAI_BASE_URL with ?token=": (
        {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": "llm.example/v1?token=Xy7Qp2Vn"},
        "OPENAI_MODEL.base_url", "http://", "Xy7Qp2Vn"),
    "Authorization header pasted as the model": (
        {"CHAT_MODEL": f"Authorization: Bearer {PLAIN}"}, "CHAT_MODEL", "model name", PLAIN),
    "Slack token as a number": (
        {"CHAT_MODEL": json.dumps({"provider": "ollama", "model": "m", "timeout": XOXB})},
        "CHAT_MODEL.timeout", "1 to 3600", XOXB),
    "AWS key as the provider": (
        {"CHAT_MODEL": json.dumps({"provider": AKIA, "model": "m"})},
        "CHAT_MODEL.provider", "allowed: openai", AKIA),
    "key pasted as api_key_env": (
        {"CHAT_MODEL": json.dumps({"model": "gpt-4o", "api_key_env": SK})},
        "CHAT_MODEL.api_key_env", "environment variable", SK),
    "JWT as the mode": ({"DEFAULT_MODE": JWT}, "DEFAULT_MODE", "chat, agent", JWT),
    "password= as a limit": (
        {"AGENT_TOOL_TIMEOUT": f"password={PLAIN}"}, "AGENT_TOOL_TIMEOUT", "1 to 3600", PLAIN),
}  # fmt: skip


@pytest.mark.parametrize("case", SETTINGS_CASES)
def test_config_error_names_the_field_never_the_secret(case: str, tmp_path, caplog) -> None:
    env, field, allowed, secret = SETTINGS_CASES[case]
    settings = load_settings(env, dotenv=False)
    errors = {e.variable: e for e in settings.errors}
    assert field in errors, settings.errors
    message = str(errors[field])
    problem = Session(settings).config_problem()  # what the welcome message shows
    names = json.dumps([Session(settings).roles(), list(settings.models)])
    assert_hidden(
        [secret], message, repr(errors[field]), str(errors[field].value), str(problem), names
    )
    assert allowed in message and field in message
    assert problem is not None and field in problem

    from brainchat.ui import conversation as conv

    caplog.set_level(logging.INFO)
    conv.log_config_problems(settings)  # the app's start-up log
    assert field in caplog.text

    for args in (["ask", "hi"], ["ask", "--json", "hi"]):
        output = run(args, env, tmp_path)
        assert field in output
        assert_hidden([secret], output, caplog.text)


def test_model_error_masks_credentials_in_a_working_base_url(tmp_path) -> None:
    base_url = f"http://admin:{PLAIN}@127.0.0.1:{free_port()}/v1"  # valid, but nobody listens
    env = {"CHAT_MODEL": json.dumps({"model": "m", "base_url": base_url, "max_retries": 0})}
    for args in (["ask", "hi"], ["ask", "--json", "hi"]):
        output = run(args, env, tmp_path)
        assert "Could not connect to m at http://***@127.0.0.1:" in output
        assert_hidden([PLAIN], output)


# ---- MCP servers ---------------------------------------------------------------------------


def mcp_cases() -> dict[str, tuple[dict[str, Any], str, list[str]]]:
    """name -> (mcpServers entries, what the error must name, the secrets it must not show)."""
    port = free_port()
    leaky_env = {"LEAKY_TOKEN": SK, "LEAKY_BEARER": PLAIN}
    return {
        "bearer token in headers": (
            {"api": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": [f"Bearer {PLAIN}"]}}},
            "'headers.Authorization'", [PLAIN]),
        "key in env": (
            {"envy": {"command": sys.executable, "env": {"API_TOKEN": {"value": SK}}}},
            "'env.API_TOKEN'", [SK]),
        "key in args given as a string": (
            {"argy": {"command": "srv", "args": f"--api-key {GHP}"}}, "'args'", [GHP]),
        "credentials in a bad url": (
            {"remote": {"url": f"ftp://bob:{PLAIN}@mcp.example/mcp"}}, "'url'", [PLAIN]),
        "credentials and ?token= in a dead server's url": (
            {"dead": {"url": f"http://bob:{PLAIN}@127.0.0.1:{port}/mcp?token=Xy7Qp2Vn"}},
            "dead", [PLAIN, "Xy7Qp2Vn"]),
        "server prints token= and a bearer to stderr, then dies": (
            {"leaky": {"command": sys.executable, "args": [str(LEAKY), "--die-at-start"], "env": leaky_env}},
            "leaky", [SK, PLAIN]),
    }  # fmt: skip


MCP_CASES = list(mcp_cases())


async def in_app_texts(config: Path, settings: Any) -> str:
    """What the app logs and shows for configured servers: start-up log, /tools, status lines."""
    from brainchat.ui import servers

    await servers.start(settings)
    try:
        tools_text = fmt.toolset_text(
            Session(settings, extra_tools=servers.toolset()).toolset(), "Agent tools"
        )
    finally:
        await servers.stop()
    async with McpHub.from_config_file(config) as hub:
        status = fmt.toolset_text(hub.toolset()) + json.dumps(hub.status())
    return tools_text + "\n" + status


@pytest.mark.slow  # three CLI processes per case (the fast lane leaves heavy subprocess tests out)
@pytest.mark.parametrize("case", MCP_CASES)
async def test_mcp_failure_names_server_and_field_never_the_secret(
    case: str, tmp_path, caplog, scripted_server
) -> None:
    entries, field, secrets = mcp_cases()[case]
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": entries}))
    s = scripted_server
    env = {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "MCP_CONFIG": str(config),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }
    caplog.set_level(logging.INFO)
    texts = await in_app_texts(config, load_settings(env, dotenv=False))
    assert field in texts and "❌" in texts
    listing = run(["tools"], env, tmp_path)
    assert "FAILED" in listing and field in listing
    as_json, _ = json.JSONDecoder().raw_decode(run(["tools", "--json"], env, tmp_path))
    assert any(field in f["reason"] or field in f["source"] for f in as_json["failures"])
    s.queue("fc", Text("No tool needed."))
    s.queue("ans", Text("Fine."))
    asked = run(["ask", "--mode", "agent", "--json", "hi"], env, tmp_path)
    assert "warning: MCP" in asked and field in asked
    assert_hidden(secrets, texts, caplog.text, listing, json.dumps(as_json), asked)


async def test_server_that_leaks_then_crashes_mid_call(tmp_path, scripted_server) -> None:
    secret = "Zq8-not-a-known-shape-4471"
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(LEAKY)], "readOnly": True,
             "env": {"LEAKY_TOKEN": secret, "LEAKY_BEARER": PLAIN}}  # fmt: skip
    config.write_text(json.dumps({"mcpServers": {"leaky": entry}}))
    s = scripted_server
    s.queue("fc", ToolCalls([Call("crash", {})]), Text("The tool failed."))
    s.queue("ans", Text("It crashed."))
    env = {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "MCP_CONFIG": str(config),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }
    output = run(["ask", "--mode", "agent", "--json", "crash it"], env, tmp_path)
    events = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    finished = next(e for e in events if e["type"] == "tool_finished")
    assert finished["status"] == "error" and "leaky" in finished["error"]
    assert "token=" in finished["error"]  # the stderr tail is still there, its values masked
    seen_by_model = json.dumps([r.messages for r in s.requests])
    assert_hidden([secret, PLAIN], output, seen_by_model)


# ---- EEG paths -----------------------------------------------------------------------------


def test_eeg_link_out_of_the_data_folder_names_only_the_link(tmp_path, scripted_server) -> None:
    data = tmp_path / "data"
    hidden = tmp_path / "private-area"
    data.mkdir()
    hidden.mkdir()
    (hidden / "target.edf").write_bytes(b"x")
    os.symlink(hidden / "target.edf", data / "link.edf")
    messages = []
    for given in ("link.edf", "../private-area/target.edf"):
        with pytest.raises(ToolException) as info:
            resolve_in_data_dir(data, given)
        messages.append(str(info.value))
        assert given in messages[-1] and "outside the data folder" in messages[-1]
    assert "link.edf" in messages[0] and "private-area" not in messages[0]
    assert_hidden([str(tmp_path.resolve())], *messages)

    s = scripted_server
    s.queue("fc", ToolCalls([Call("load_data", {"files": ["link.edf"]})]), Text("Refused."))
    s.queue("ans", Text("That file is outside."))
    env = {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "BRAINCHAT_DATA_DIR": str(data),
    }
    output = run(["ask", "--mode", "agent", "--json", "load link.edf"], env, tmp_path)
    events = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    finished = next(e for e in events if e["type"] == "tool_finished")
    assert finished["status"] == "error" and "link.edf" in finished["error"]
    assert_hidden(["private-area", str(tmp_path.resolve())], finished["error"])
    assert_hidden(["private-area"], json.dumps([r.messages for r in s.requests]))


# ---- the masking itself --------------------------------------------------------------------


def test_brainchat_log_records_are_masked_message_and_traceback(caplog) -> None:
    from brainchat.redact import get_logger

    log = get_logger("brainchat.tools.mcp")
    caplog.set_level(logging.INFO)
    log.warning("server said %s", f"token={PLAIN}")
    try:
        raise RuntimeError(f"upstream refused {SK}")
    except RuntimeError:
        log.exception("call failed with Authorization: Bearer %s", JWT)
    formatted = "\n".join(logging.Formatter().format(r) for r in caplog.records)
    assert "token=***" in formatted and "RuntimeError: upstream refused ***" in formatted
    assert_hidden([PLAIN, SK, JWT], caplog.text, formatted)


def test_ordinary_text_is_left_alone() -> None:
    from brainchat.redact import mask

    ordinary = [
        "CHAT_MODEL.max_tokens: 0 is not valid; known keys: api_key, api_key_env, base_url",
        "gpt-4o-mini-2024-07-18 Qwen/Qwen2.5-7B-Instruct claude-3-5-sonnet-20241022 llama3.1:8b",
        "sub-01_ses-01_task-mi_eeg.edf at /tmp/pytest-of-root/pytest-11/test_eeg_0/data",
        "Could not connect to m at http://127.0.0.1:8765/v1. Is the server running?",
        "fc: 2 call(s) · 100 in / 20 out · input_tokens=100, the author: Bob",
    ]
    assert [mask(text) for text in ordinary] == ordinary
