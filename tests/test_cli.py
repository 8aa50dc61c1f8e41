"""`brainchat ask` and `brainchat tools` as a user runs them: a real process against the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from brainchat.testing.scripted_server import Call, Fault, Text, ToolCalls

from support import agent_env, spec_json

BIN = Path(sys.executable).parent / "brainchat"
ROOT = Path(__file__).resolve().parents[1]


def run(
    args: list[str], env: dict[str, str], cwd: Path, exe: str | Path = BIN
) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_"))
    }
    return subprocess.run(
        [str(exe), *args],
        env={**clean, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ask_chat_prints_streamed_answer_and_stats(scripted_server, tmp_path) -> None:
    scripted_server.queue("m", Text("Theta is 4 to 8 Hz."))
    out = run(["ask", "What is theta?"], {"CHAT_MODEL": spec_json(scripted_server, "m")}, tmp_path)
    assert out.returncode == 0, out.stderr
    usage = scripted_server.requests[-1].usage
    assert "Theta is 4 to 8 Hz." in out.stdout
    assert f"{usage['prompt_tokens']} in / {usage['completion_tokens']} out" in out.stdout


def test_ask_agent_json_prints_one_event_per_line(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "EEGNet"})]))  # the rule ends the loop
    s.queue("ans", Text("EEGNet is compact [1]."))
    env = agent_env(s, tmp_path)
    out = run(["ask", "--mode", "agent", "--json", "What is EEGNet?"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    for kind in (
        "tool_call_started",
        "tool_finished",
        "evaluation",
        "model_switch",
        "answer_token",
        "citations",
        "stats",
    ):
        assert kind in types, kind
    finished = next(e for e in events if e["type"] == "tool_finished")
    assert finished["name"] == "web_search" and finished["result_count"] == 4
    assert events[-1]["answer"] == "EEGNet is compact [1]."


def test_ask_agent_readable_output(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue("fc", ToolCalls([Call("web_search", {"query": "mu rhythm"})]))  # the rule ends the loop
    s.queue("ans", Text("Mu is 8-13 Hz [2]."))
    env = agent_env(s, tmp_path)
    out = run(["ask", "--mode", "agent", "mu?"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert '→ web_search({"query": "mu rhythm"})' in out.stdout
    assert "✓ web_search success" in out.stdout and "answering with ans" in out.stdout
    assert "[2] Motor imagery and mu rhythm" in out.stdout and "function_call: fc" in out.stdout


def test_config_error_exits_non_zero_with_clear_message(tmp_path) -> None:
    out = run(["ask", "hi"], {"CHAT_MODEL": '{"model": "x",'}, tmp_path)
    assert out.returncode == 2
    assert (
        "CHAT_MODEL" in out.stderr and "broken JSON" in out.stderr and "Traceback" not in out.stderr
    )


def test_a_config_error_is_told_before_the_agents_libraries_load(tmp_path) -> None:
    """`brainchat ask` with a bad configuration says so without importing LangChain and the
    session (1.5 s of a 2 s start on these cores): what it prints is the settings' alone."""
    probe = (
        "import sys; from brainchat.cli import main; rc = main(['ask', 'hi']); "
        "print(rc, 'langchain_core' in sys.modules, 'brainchat.session' in sys.modules)"
    )
    out = run(["-c", probe], {"CHAT_MODEL": '{"model": "x",'}, tmp_path, exe=sys.executable)
    assert out.stdout.split() == ["2", "False", "False"], out.stderr
    assert "CHAT_MODEL" in out.stderr and "broken JSON" in out.stderr


def test_no_model_configured_exits_non_zero(tmp_path) -> None:
    out = run(["ask", "hi"], {}, tmp_path)
    assert out.returncode == 2 and "No model is configured" in out.stderr


def test_model_error_exits_non_zero(scripted_server, tmp_path) -> None:
    scripted_server.queue("m", Fault(500))
    out = run(
        ["ask", "hi"], {"CHAT_MODEL": spec_json(scripted_server, "m", max_retries=0)}, tmp_path
    )
    assert len(scripted_server.requests) == 1  # max_retries=0: asked once
    assert out.returncode == 1 and "HTTP 500" in out.stderr and "Traceback" not in out.stderr


def test_tools_lists_every_tool_with_flags_and_failures(tmp_path) -> None:
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}})
    )
    env = {
        "CHAT_MODEL": '{"provider": "ollama", "model": "x"}',
        "MCP_CONFIG": str(tmp_path / "mcp.json"),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }
    out = run(["tools", "--json"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    by_name = {t["name"]: t for t in data["tools"]}
    assert by_name["web_search"]["read_only"] and by_name["web_search"]["source"] == "local"
    assert "query" in by_name["web_search"]["args_schema"]["properties"]
    assert by_name["clear_study"]["destructive"] and by_name["train_model"]["long_running"]
    assert any("ghost" in f["source"] for f in data["failures"])
    text = run(["tools"], env, tmp_path)
    assert "web_search(query, max_results)  [local; read_only]" in text.stdout
    assert "FAILED" in text.stdout and "ghost" in text.stdout


def test_ask_agent_uses_configured_mcp_server(scripted_server, tmp_path) -> None:
    lab = Path(__file__).parent / "mcp_servers" / "eeg_lab.py"
    (tmp_path / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "lab": {"command": sys.executable, "args": [str(lab)], "readOnly": True}
                }
            }
        )
    )
    s = scripted_server
    s.queue("fc", ToolCalls([Call("add", {"a": 2, "b": 40})]), Text("enough"))
    s.queue("ans", Text("The sum is 42."))
    env = {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "MCP_CONFIG": str(tmp_path / "mcp.json"),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }
    out = run(["ask", "--mode", "agent", "--json", "2+40?"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    finished = next(e for e in events if e["type"] == "tool_finished")
    assert (
        finished["name"] == "add"
        and finished["status"] == "success"
        and "42" in finished["content"]
    )
    started = next(e for e in events if e["type"] == "tool_call_started")
    assert started["source"] == "mcp:lab"


def test_demo_data_writes_real_edf_files_into_the_data_folder(tmp_path) -> None:
    out = run(
        ["demo-data", "--subjects", "1", "--sessions", "1", "--trials", "20"],
        {"BRAINCHAT_DATA_DIR": str(tmp_path / "data")},
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "data" / "demo").glob("*.edf"))
    assert [f.name for f in files] == ["sub-01_ses-01_task-mi_eeg.edf"]
    import mne

    raw = mne.io.read_raw_edf(files[0], preload=False, verbose="error")
    assert len(raw.ch_names) == 22 and raw.info["sfreq"] == 250


@pytest.mark.slow  # starts the app (a process of its own)
def test_brainchat_starts_the_web_app_with_host_and_port_passed_through(tmp_path) -> None:
    page, settings = served_settings([str(BIN), "--host", "127.0.0.1"], ROOT, {})
    assert "<html" in page.lower() and settings["ui"]["name"] == "brainchat"


def test_the_demo_refuses_a_host_other_than_loopback_even_with_password_login(tmp_path) -> None:
    # its state folder has no accounts, so it runs without login: never on a reachable address
    env = {"BRAINCHAT_AUTH": "password", "BRAINCHAT_DATA_DIR": str(tmp_path / "data")}
    done = run(["--demo", "--host", "0.0.0.0"], env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the demo listens on 127.0.0.1 only" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "state").exists()  # refused before anything was written


def test_the_demo_refuses_a_pace_that_is_not_a_number_from_0_to_10(tmp_path) -> None:
    env = {"BRAINCHAT_DATA_DIR": str(tmp_path / "data"), "BRAINCHAT_DEMO_PACE": "fast"}
    done = run(["--demo"], env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "BRAINCHAT_DEMO_PACE" in done.stderr and "0" in done.stderr and "10" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "state").exists()  # refused before anything was written


def served_settings(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """Start the web app with `cmd` in `cwd`, check the project's script is served, and return
    the first page and Chainlit's /project/settings as the browser reads them."""
    import socket
    import time
    import urllib.request
    from http.cookiejar import CookieJar

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "CHAINLIT_APP_ROOT")
        and not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "BRAINCHAT_"))
    }
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--headless"],
        cwd=cwd,
        env={**clean, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, page = time.time() + 60, ""
        while time.time() < deadline and not page:
            try:
                page = urllib.request.urlopen(f"{base}/", timeout=2).read().decode()
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
                time.sleep(0.3)
        assert "/public/brainchat.js" in page  # the project's config.toml, not a default one
        script = urllib.request.urlopen(f"{base}/public/brainchat.js", timeout=5)
        assert script.status == 200
        assert script.read() == (ROOT / "public" / "brainchat.js").read_bytes()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        browser.addheaders = [("Origin", base)]
        browser.open(urllib.request.Request(f"{base}/auth/header", method="POST"), timeout=5)
        asked = browser.open(f"{base}/project/settings?language=en-US", timeout=5)
        return page, json.loads(asked.read())
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow  # starts the app (a process of its own)
def test_brainchat_started_elsewhere_uses_its_own_chainlit_config(tmp_path) -> None:
    """From another folder the app writes no default .chainlit/ or chainlit.md there and serves
    the project's own welcome text, custom script and name."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    page, settings = served_settings([str(BIN)], elsewhere, {})
    assert "<title>brainchat</title>" in page
    assert settings["markdown"] == (ROOT / "chainlit.md").read_text(encoding="utf-8")
    assert settings["ui"]["name"] == "brainchat"
    assert not (elsewhere / ".chainlit").exists() and not (elsewhere / "chainlit.md").exists()


@pytest.mark.slow  # builds a wheel, installs it, starts the app (a process of its own)
def test_an_installed_wheel_carries_the_apps_files_and_serves_them(
    scripted_server, tmp_path
) -> None:
    """A non-editable install has no checkout to read prompts/, examples/, chainlit.md, public/
    and .chainlit/ from: the wheel carries them, the prompts reach the model and the app serves
    them from a copy in its state folder (site-packages may be read-only)."""
    import zipfile

    from brainchat.resources import FILES

    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(tmp_path / "dist"), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("brainchat-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    expected = [
        p for folder, pattern in FILES for p in (ROOT / folder).glob(pattern) if p.is_file()
    ]
    assert len(expected) >= 10
    for source in expected:
        copy = site / "brainchat" / "_app" / source.relative_to(ROOT)
        assert copy.read_bytes() == source.read_bytes(), copy

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PYTHONPATH": str(site)}  # ahead of the editable install's path to src/
    probe = run(
        [
            "-c",
            "import brainchat.resources as r, brainchat.demo as d; "
            "print(r.ROOT); print(d.SCRIPT.is_file())",
        ],
        env,
        elsewhere,
        exe=sys.executable,
    )
    assert probe.stdout.split() == [str(site / "brainchat" / "_app"), "True"], probe.stderr

    s = scripted_server
    s.queue("m", Text("Theta is 4-8 Hz."))
    asked = run(
        ["-c", "import sys; from brainchat.cli import main; sys.exit(main())", "ask", "theta?"],
        {**env, "CHAT_MODEL": spec_json(s, "m")},
        elsewhere,
        exe=sys.executable,
    )
    assert asked.returncode == 0 and "Theta is 4-8 Hz." in asked.stdout, asked.stderr
    system = s.requests_for("m")[0].messages[0]
    assert system["role"] == "system"
    assert (ROOT / "prompts" / "chat.md").read_text(encoding="utf-8").strip() in system["content"]

    cmd = [sys.executable, "-c", "import sys; from brainchat.cli import main; sys.exit(main())"]
    page, settings = served_settings(cmd, elsewhere, env)
    assert settings["markdown"] == (ROOT / "chainlit.md").read_text(encoding="utf-8")
    assert settings["ui"]["name"] == "brainchat"
    served = elsewhere / "state" / "app"
    assert (served / ".chainlit" / "config.toml").read_bytes() == (
        ROOT / ".chainlit" / "config.toml"
    ).read_bytes()
    assert not (elsewhere / ".chainlit").exists() and not (elsewhere / "chainlit.md").exists()
    assert not (site / "brainchat" / "_app" / ".files").exists()  # nothing written into the wheel


def plan_env(s: Any, tmp_path: Path, **extra: str) -> dict[str, str]:
    from brainchat.eeg.io.synthetic import write_demo_set

    write_demo_set(tmp_path / "data", subjects=1, sessions=1, trials=20, seed=1)
    return {
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
        "AGENT_PLAN_MODE": "always",
        **extra,
    }


def submit_plan(*steps: tuple[str, str]) -> ToolCalls:
    return ToolCalls([Call("submit_plan", {"steps": [{"title": t, "tool": n} for t, n in steps]})])


EDF = "sub-01_ses-01_task-mi_eeg.edf"


def test_ask_json_prints_plan_steps_and_replans_as_typed_events(scripted_server, tmp_path) -> None:
    s = scripted_server
    s.queue(
        "fc",
        submit_plan(("Load sub-01", "load_data"), ("Epoch", "epoch_data")),
        ToolCalls([Call("load_data", {"files": [EDF]})]),
        ToolCalls([Call("epoch_data", {"tmin": 2.0, "tmax": 1.0})]),  # the step fails
        submit_plan(("Epoch 0.5-2.5 s", "epoch_data")),
        ToolCalls([Call("epoch_data", {"tmin": 0.5, "tmax": 2.5})]),
    )
    s.queue("ans", Text("Loaded and epoched."))
    out = run(
        ["ask", "--mode", "agent", "--json", "load sub-01 and epoch"],
        plan_env(s, tmp_path),
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    [created] = [e for e in events if e["type"] == "plan_created"]
    assert [(st["id"], st["title"], st["status"]) for st in created["steps"]] == [
        (1, "Load sub-01", "ready"), (2, "Epoch", "ready")]  # fmt: skip
    assert created["mode"] == "always" and created["max_replans"] == 2
    moves = [(e["step_id"], e["status"]) for e in events if e["type"] == "plan_step_updated"]
    assert moves == [(1, "running"), (1, "done"), (2, "running"), (2, "failed"),
                     (3, "running"), (3, "done")]  # fmt: skip
    [replanned] = [e for e in events if e["type"] == "replanned"]
    assert replanned["attempt"] == 1 and "step 2 (Epoch) failed" in replanned["reason"]
    assert [st["status"] for st in replanned["steps"]] == ["done", "failed", "ready"]
    assert events[-1]["type"] == "run_finished" and events[-1]["reason"] == "answered"


def test_ask_prints_the_plan_and_single_step_mode_stops_before_the_next_step(
    scripted_server, tmp_path
) -> None:
    s = scripted_server
    s.queue(
        "fc",
        submit_plan(("Load sub-01", "load_data"), ("Band-pass 8-30 Hz", "bandpass_filter")),
        ToolCalls([Call("load_data", {"files": [EDF]})]),
    )
    s.queue("ans", Text("Loaded sub-01; band-pass is next."))
    env = plan_env(s, tmp_path, AGENT_EXECUTION_MODE="single_step")
    out = run(["ask", "--mode", "agent", "load sub-01 and band-pass 8-30 Hz"], env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "· plan\n  1. Load sub-01 [ready]\n  2. Band-pass 8-30 Hz [ready]\n" in out.stdout
    assert "· step 1 done: Load sub-01 — verified: load_data succeeded" in out.stdout
    assert "step 2 done" not in out.stdout and "step 2 running" not in out.stdout
    assert "single-step mode: stopped before plan step 2: Band-pass 8-30 Hz" in out.stderr
    assert "--allow-destructive" not in out.stderr  # that flag approves tools, not plan steps
    assert len(s.requests_for("fc")) == 2  # the planner and step 1, nothing after
