"""`brainchat ask`: an MCP server's request for input, answered in the terminal.

In a terminal each field is asked in turn, checked (type, limits, format, options) and asked
again when wrong; a secret field is typed without echo; then accept, decline or cancel. Without a
terminal (CI, a pipe) nobody can answer: the server gets `cancel` and stderr says so, and what to
do, in one line. Prompts go to stderr, so `--json` output stays clean.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from brainchat.tools.mcp_elicit import Asker, Field, Form, Reply

_ACTIONS = {"a": "accept", "accept": "accept", "d": "decline", "decline": "decline"}
_ACTIONS |= {"c": "cancel", "cancel": "cancel"}


class _Stop(Exception):
    def __init__(self, action: str):
        self.action = action


def terminal_asker(stdin: TextIO | None = None, out: TextIO | None = None) -> Asker:
    """The `Asker` of `brainchat ask`: the terminal when stdin is one, else a one-line refusal."""
    stdin, out = stdin or sys.stdin, out or sys.stderr
    lines = _Lines(stdin)

    async def ask(form: Form) -> Reply:
        if not stdin.isatty():
            print(
                f"! MCP server '{form.server}' asked for input during {form.tool or 'a call'} "
                f"({form.message[:80]}), which cannot be given without a terminal: cancelled. "
                "Run `brainchat ask` in a terminal, or use the web app, to answer it.",
                file=out,
                flush=True,
            )
            return Reply("cancel")
        try:
            return await _TerminalForm(form, lines, out).run()
        except asyncio.CancelledError:
            print("\n(the form was closed: the call ended or its time ran out)", file=out)
            raise

    return ask


class _TerminalForm:
    def __init__(self, form: Form, lines: _Lines, out: TextIO):
        self.form, self.lines, self.out = form, lines, out

    async def run(self) -> Reply:
        f, out = self.form, self.out
        print(
            f"\n? MCP server '{f.server}' asks ({f.tool or 'during a call'}): {f.message}", file=out
        )
        print(
            f"  Enter leaves an optional field empty; !decline or !cancel at any prompt; "
            f"{f.timeout:.0f} s to answer.",
            file=out,
        )
        answers: dict[str, Any] = {}
        try:
            for field in f.fields:
                value = await self._field(field)
                if value is not None:
                    answers[field.name] = value
            while True:
                choice = await self._line(
                    f"  Send to '{f.server}'? [a]ccept / [d]ecline / [c]ancel: "
                )
                if choice.strip().lower() in _ACTIONS:
                    action = _ACTIONS[choice.strip().lower()]
                    break
        except _Stop as stop:
            action = stop.action
        if action != "accept":
            return Reply(action)  # type: ignore[arg-type]
        return Reply("accept", f.validate(answers))

    async def _field(self, field: Field) -> Any:
        options = "".join(f"\n    {i}) {label}" for i, (_, label) in enumerate(field.options, 1))
        about = f" — {field.description}" if field.description else ""
        default = f" [{field.default}]" if field.default is not None else ""
        star = " *" if field.required else ""
        prompt = f"  {field.label}{about} ({field.hint()}){options}{default}{star}: "
        while True:
            text = await self._line(prompt, secret=field.secret)
            if text.strip() in ("!decline", "!cancel"):
                raise _Stop(text.strip()[1:])
            try:
                value = field.parse(text)
                if value is None and field.default is not None:
                    value = field.parse(field.default)
                if value is None:
                    if field.required:
                        raise ValueError("is required")
                    return None
                field.check(value)
                return value
            except ValueError as exc:
                print(f"    {field.label} {exc}; try again.", file=self.out, flush=True)

    async def _line(self, prompt: str, secret: bool = False) -> str:
        with _no_echo(self.lines.fd, secret):  # before the prompt: what is typed at once too
            print(prompt, end="", file=self.out, flush=True)
            line = await self.lines.read()
        if secret:
            print(file=self.out)
        if line is None:
            raise _Stop("cancel")  # end of input
        return line


class _Lines:
    """Lines from the terminal, read without blocking the event loop (the MCP session and the
    run go on) and from the descriptor itself, so lines typed ahead are not lost in a buffer."""

    def __init__(self, stdin: TextIO):
        self.stdin = stdin
        self.buffer = b""

    @property
    def fd(self) -> int:
        return self.stdin.fileno()

    async def read(self) -> str | None:
        loop = asyncio.get_running_loop()
        while b"\n" not in self.buffer:
            got: asyncio.Future[bytes] = loop.create_future()

            def readable(got: asyncio.Future[bytes] = got) -> None:
                if not got.done():
                    got.set_result(os.read(self.fd, 4096))

            loop.add_reader(self.fd, readable)
            try:
                chunk = await got
            finally:
                loop.remove_reader(self.fd)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode(errors="replace").rstrip("\r")


@contextlib.contextmanager
def _no_echo(fd: int, secret: bool) -> Iterator[None]:
    """What is typed into a secret field is not shown."""
    if not secret:
        yield
        return
    import termios

    old = termios.tcgetattr(fd)
    new = list(old)
    new[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSADRAIN, new)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
