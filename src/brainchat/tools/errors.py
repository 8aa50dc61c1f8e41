"""A tool's failure as data: what failed, why, and the call that would fix it.

Its text is what the model and the user read; `next_call` is the same advice as a value, so the
agent names the next step (a loop stop's hint, the note after a repeated failure) without
reading the prose back. A tool that has no such advice raises a plain ToolException.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import ToolException


class ToolError(ToolException):
    """A tool failure with its fix: `next_call` is {"name": tool, "arguments": {...}}."""

    def __init__(self, text: str, next_call: dict[str, Any] | None = None) -> None:
        super().__init__(text)
        self.next_call = next_call


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """The next call as ToolError carries it."""
    return {"name": name, "arguments": dict(arguments or {})}


class CorrectedCall(ValueError):
    """An argument check's failure (raised in a pydantic validator) with the call that fixes it;
    pydantic keeps it in the error's context, where `fix_of` finds it."""

    def __init__(self, text: str, next_call: dict[str, Any] | None = None) -> None:
        super().__init__(text)
        self.next_call = next_call


def fix_of(exc: BaseException) -> dict[str, Any] | None:
    """The fix a failure carries: a ToolError's, or a CorrectedCall's inside a ValidationError."""
    if (found := getattr(exc, "next_call", None)) is not None:
        return found  # type: ignore[no-any-return]
    errors = getattr(exc, "errors", None)
    if callable(errors):
        for err in errors():
            inner = (err.get("ctx") or {}).get("error")
            if isinstance(inner, CorrectedCall) and inner.next_call is not None:
                return inner.next_call
    return None
