"""An MCP server asks the user for input mid-call: a form in the chat.

Chainlit has no general form, so `public/elements/ElicitationForm.jsx` (sent with
`cl.AskElementMessage`, as the connection form is) shows the server's name and message and one
box per field, with Accept / Decline / Cancel: all fields at once, as a form, rather than one
AskUserMessage per field (a chain of questions that the page would show as separate messages and
that could not be declined as a whole). The answer is checked here (tools/mcp_elicit.py); a wrong
one opens the form again saying what was wrong, with the non-secret answers kept. No answer
before the call's time runs out is `cancel`. What was asked and answered then stays in the chat
(secret fields as •••); secrets typed here are masked in this user's output from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import Any, cast

import chainlit as cl

from brainchat import i18n, redact
from brainchat.tools.mcp_elicit import Asker, Field, Form, InvalidAnswer, Reply
from brainchat.ui.connect import _user
from brainchat.ui.render import AUTHOR

FORM = "ElicitationForm"  # public/elements/ElicitationForm.jsx
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def make_asker() -> Asker:
    """The `Asker` of one chat turn: the form in this conversation."""

    async def ask(form: Form) -> Reply:
        deadline = time.monotonic() + form.timeout
        values: dict[str, Any] = {}
        errors: dict[str, str] = {}
        while True:
            question, reply = await _show(form, values, errors, deadline - time.monotonic())
            if reply is None or not reply.get("submitted"):
                outcome = Reply("cancel")
            elif reply.get("action") != "accept":
                outcome = Reply("decline")
            else:
                answers = dict(reply.get("values") or {})
                reply.clear()  # the answers live in one place only
                _remember_secrets(form, answers)
                try:
                    outcome = Reply("accept", form.validate(answers))
                except InvalidAnswer as exc:
                    errors = exc.errors
                    values = {f.name: answers.get(f.name) for f in form.fields if not f.secret}
                    await question.remove()
                    continue
            await _settle(question, form, outcome, timed_out=reply is None)
            return outcome

    return ask


async def _show(
    form: Form, values: dict[str, Any], errors: dict[str, str], seconds: float
) -> tuple[cl.AskElementMessage, dict[str, Any] | None]:
    props = {
        "server": form.server,
        "message": form.message,
        "fields": [_field(f) for f in form.fields],
        "values": values,
        "errors": errors,
    }
    element = cl.CustomElement(name=FORM, props=props, display="inline")
    intro = i18n.t("mcp.asks", server=plain(form.server), tool=plain(form.tool))
    intro += quoted(form.message)
    if errors:
        intro += i18n.t("mcp.correct")
    question = cl.AskElementMessage(
        content=intro, element=element, author=AUTHOR, timeout=max(1, int(seconds))
    )
    try:
        return question, cast("dict[str, Any] | None", await question.send())
    except asyncio.CancelledError:  # Stop, or the call ended: the form must not stay open
        with contextlib.suppress(Exception):
            await cl.context.emitter.clear("clear_ask")
            await element.remove()
            question.content = _asked(form, i18n.t("mcp.closed"))
            await question.update()
        raise


def _field(f: Field) -> dict[str, Any]:
    return {
        "name": f.name,
        "label": f.label,
        "description": f.description,
        "hint": f.hint(),
        "kind": f.kind,
        "format": f.format,
        "required": f.required,
        "secret": f.secret,
        "min_length": f.min_length,
        "max_length": f.max_length,
        "minimum": f.minimum,
        "maximum": f.maximum,
        "options": [{"value": v, "label": label} for v, label in f.options],
        "default": None if f.secret else f.default,
    }


def _remember_secrets(form: Form, answers: dict[str, Any]) -> None:
    for f in form.fields:
        value = answers.get(f.name)
        if f.secret and isinstance(value, str):
            redact.remember(value, _user())  # masked in this user's output from now on


async def _settle(
    question: cl.AskElementMessage, form: Form, reply: Reply, timed_out: bool
) -> None:
    """The form's message becomes what was asked and what was answered (no secret values)."""
    said = i18n.t("mcp.no_answer") if timed_out else form.summary(reply)
    question.content = _asked(form, said)
    await question.update()
    await (
        cl.context.emitter.task_start()
    )  # Chainlit ended "the task" for the answer; the run goes on


def _asked(form: Form, outcome: str) -> str:
    return i18n.t(
        "mcp.asked", server=plain(form.server), message=quoted(form.message), outcome=plain(outcome)
    )


def plain(text: str) -> str:
    """A server's (or an answer's) text shown as text: no link, image or markup of its own."""
    return _MARKDOWN.sub(r"\\\1", text)


def quoted(text: str) -> str:
    return "\n".join("> " + plain(line) for line in text.splitlines() or [""])
