"""Arguments a tool fixes itself, said to the user and the model.

A small model writes epoch_data's `baseline` as the text "None", or as [null]: slips of form
with one meaning. A tool whose argument schema has a `repair(args) -> (args, notes)` class method
(eeg/tools/schemas.py) gets its call's arguments fixed before anything checks them, in every
tool-calling mode, with a notice; what still breaks the tool's own argument model is then that
model's message (the allowed values and a corrected call), not the JSON schema's bare one. A
repair never changes what a call means: a value that may be wrong is the guards' to send back
as a suggestion (agent/guards.py), for the model to decide.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool
from pydantic import ValidationError

from brainchat.events import Notice, emit
from brainchat.tools.errors import fix_of

SCHEMA_PROBLEM = "the arguments do not match"  # textcalls' prefix: prompt mode's schema check


def repaired(call: dict[str, Any], tool: BaseTool | None) -> dict[str, Any]:
    """`call` with its arguments fixed by the tool's own `repair` (a notice says what), and a
    prompt-mode schema problem replaced by the tool's verdict on the fixed arguments. A repair
    fixes form, never meaning: what the call asks stays what the model asked."""
    model = getattr(tool, "args_schema", None)
    fix = getattr(model, "repair", None)
    args = call.get("args")
    if tool is None or fix is None or not isinstance(args, dict):
        return call
    fixed, notes = fix(args)
    call = {**call, "args": fixed}
    if notes:
        call["repaired"] = notes
        emit(
            Notice(
                kind="info",
                message=f"{tool.name}'s arguments were fixed before it ran: {'; '.join(notes)}.",
            )
        )
    invalid = str(call.get("invalid") or "")
    if invalid.startswith(SCHEMA_PROBLEM):
        call.pop("invalid")
        try:
            model.model_validate(fixed)  # type: ignore[union-attr]
        except ValidationError as exc:
            call["invalid"] = f"invalid arguments for {tool.name}: {validation_text(exc)}"
            call["fix"] = fix_of(exc)  # the corrected call a check names, as a value
    return call


def repair_note(call: dict[str, Any]) -> str:
    """What the model reads before the result of a call whose arguments were fixed."""
    notes = call.get("repaired")
    if not notes:
        return ""
    return f"(brainchat fixed your arguments before running it: {'; '.join(notes)})\n"


def validation_text(exc: ValidationError) -> str:
    """A tool's bad arguments in one line: where and what, the first five (also mcpserver's)."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        msg = str(err.get("msg"))
        if err.get("type") == "literal_error":  # the value sent beside the allowed ones
            msg = f"{err.get('input')!r} is not one of {(err.get('ctx') or {}).get('expected')}"
        parts.append(f"{where}: {msg.removeprefix('Value error, ')}")  # the rule's own words
    return "; ".join(parts)
