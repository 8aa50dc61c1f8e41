"""`brainchat ask` when an MCP server asks for input (#25 elicitation): in a terminal (a real pty)
each field is prompted and checked; without one (a pipe, CI) the server gets `cancel` and the user
one line saying why and what to do. A real `brainchat` process, the scripted model server and the
FastMCP elicit-lab server over stdio."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from brainchat.testing.scripted_server import Call, Text, ToolCalls

from support import spec_json

BIN = Path(sys.executable).parent / "brainchat"
LAB = Path(__file__).parent / "mcp_servers" / "elicit_lab.py"


def setup(s: Any, tmp_path: Path, tool: str) -> dict[str, str]:
    # no approval before the call; the form's time is the call's: ample on a loaded machine
    lab = {"command": sys.executable, "args": [str(LAB)], "destructive": False, "timeout": 280}
    servers = {"elicit": lab}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    s.queue("fc", ToolCalls([Call(tool, {})]), Text("Enough."))
    s.queue("ans", Text("Done."))
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CHAT_MODEL", "AGENT_", "MCP_", "BRAINCHAT_"))
    }
    return {
        **clean,
        "AGENT_FUNCTION_CALL_MODEL": spec_json(s, "fc"),
        "AGENT_ANSWER_MODEL": spec_json(s, "ans"),
        "AGENT_MAX_EXECUTION_TIME": "300",
        "MCP_CONFIG": str(tmp_path / "mcp.json"),
        "BRAINCHAT_DATA_DIR": str(tmp_path / "data"),
    }


def test_without_a_terminal_the_server_gets_cancel_and_the_user_one_line(scripted_server, tmp_path):
    env = setup(scripted_server, tmp_path, "register_participant")
    out = subprocess.run(
        [str(BIN), "ask", "--mode", "agent", "Register the participant"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,  # not a terminal
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    told = [line for line in out.stderr.splitlines() if "asked for input" in line]
    assert told == [
        "! MCP server 'elicit' asked for input during register_participant (Who is the "
        "participant?), which cannot be given without a terminal: cancelled. Run `brainchat ask` "
        "in a terminal, or use the web app, to answer it."
    ]
    assert "not registered: the user chose cancel" in out.stdout  # the server's own result
    assert "Done." in out.stdout


class Terminal:
    """The pty's other side: what the process writes there, and answers typed when asked."""

    def __init__(self, fd: int):
        self.fd, self.seen, self.at = fd, "", 0

    def expect(self, text: str, within: float = 90.0) -> None:
        """Wait until `text` appears after what was already matched (a bound, not a pace)."""
        deadline = time.monotonic() + within
        while text not in self.seen[self.at :]:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never came; the terminal shows:\n{self.seen[-2000:]}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the process ended and closed its side
                    chunk = b""
                assert chunk, f"{text!r} never came before the end:\n{self.seen[-2000:]}"
                self.seen += chunk.decode(errors="replace")
        self.at = self.seen.index(text, self.at) + len(text)

    def answer(self, prompt: str, text: str) -> None:
        self.expect(prompt)
        os.write(self.fd, text.encode() + b"\n")


def start_in_a_pty(env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[str], Terminal]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [str(BIN), "ask", "--mode", "agent", "Go"],
        env=env,
        cwd=cwd,
        stdin=slave,
        stderr=slave,  # the prompts
        stdout=subprocess.PIPE,
        text=True,
    )
    os.close(slave)
    return proc, Terminal(master)


def test_in_a_terminal_each_field_is_asked_and_checked(scripted_server, tmp_path):
    proc, term = start_in_a_pty(setup(scripted_server, tmp_path, "register_participant"), tmp_path)
    try:
        term.expect("? MCP server 'elicit' asks (register_participant): Who is the participant?")
        term.answer("Name — The participant's name (text, 2-40 characters) *: ", "A")
        term.expect("Name must have at least 2 characters; try again.")
        term.answer("(text, 2-40 characters) *: ", "Ada")
        term.answer("Email — Contact address (email) *: ", "ada@")
        term.expect("Email must be an email address (name@example.org); try again.")
        term.answer("(email) *: ", "ada@example.org")
        term.answer("Age — Age in years (whole number 18-99) *: ", "17")
        term.expect("Age must be at least 18; try again.")
        term.answer("(whole number 18-99) *: ", "36")
        term.answer("Weight — Weight in kg (number 20-300) [70.0]: ", "")  # the default
        term.answer("Consent — Consent to share the recording (yes or no) *: ", "y")
        term.answer("Send to 'elicit'? [a]ccept / [d]ecline / [c]ancel: ", "a")
        stdout, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
        os.close(term.fd)
    assert proc.returncode == 0
    assert "registered Ada <ada@example.org>, 36 y, 70 kg, consent=True" in stdout
    assert "you accepted (Name: Ada; Email: ada@example.org; Age: 36; Weight: 70" in stdout


def test_a_secret_field_is_not_echoed_and_decline_is_sent(scripted_server, tmp_path):
    proc, term = start_in_a_pty(setup(scripted_server, tmp_path, "pick_band"), tmp_path)
    try:
        term.answer("1) Mu (8-12 Hz)\r\n    2) Beta (13-30 Hz) *: ", "2")
        term.answer("2) Right (C4) *: ", "Left (C3)")
        term.answer("Session date (date): ", "")
        term.answer("Archive password (text): ", "hunter2-secret")
        term.answer("[a]ccept / [d]ecline / [c]ancel: ", "d")
        stdout, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
        os.close(term.fd)
    assert proc.returncode == 0
    assert "hunter2" not in term.seen + stdout  # typed without echo, never printed
    assert '{"action":"decline","content":null}' in stdout
