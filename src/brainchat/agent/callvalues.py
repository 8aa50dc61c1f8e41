"""The values a guided model's call is held to: the user's fixed values it contradicts or
leaves out (as a suggestion), compared by meaning rather than spelling, and a suggestion made
whole by the tool's own check before the model sees it."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brainchat.agent.context import Deps


def conflict(d: Deps, tool: str, args: dict[str, Any], fixed: dict[str, Any]) -> Any:
    """The user's fixed values the call contradicts or leaves out, as a suggestion."""
    from brainchat.domain import Suggestion

    known = d.tool_arguments(tool)
    sent = {k: args[k] if k in args else (known.get(k) or {}).get("default") for k in known}
    wrong = {k: v for k, v in fixed.items() if k in known and not _same(sent.get(k), v)}
    # a value the tool's own form repair would drop from the suggested call selects nothing
    # beside the call's other arguments (BIDS selectors beside named files): no conflict
    repair = getattr(getattr(d.runner.tools.get(tool), "args_schema", None), "repair", None)
    if wrong and callable(repair):
        kept, _ = repair({**args, **wrong})
        wrong = {k: v for k, v in wrong.items() if k in kept}
    if not wrong:
        return None
    said = "; ".join(
        f"{k} {json.dumps(v, ensure_ascii=False)} (the call "
        + (f"sends {json.dumps(args[k], ensure_ascii=False)})" if k in args else "leaves it out)")
        for k, v in wrong.items()
    )
    return Suggestion({**args, **wrong}, f"the request sets {said}")


def _same(sent: Any, want: Any) -> bool:
    """The call agrees with the user's value: equal as numbers or as text, or a text that holds
    the user's words ("demo/sub-01_ses-01_eeg.edf" for "sub-01"); a list holding each of the
    user's items (the user named CSP+LDA; the call compares it with another pipeline too)."""
    if isinstance(sent, list) and isinstance(want, list):
        return all(any(_same(s, w) for s in sent) for w in want)
    a, b = _norm(sent), _norm(want)
    return a == b or (isinstance(a, str) and isinstance(b, str) and len(b) > 2 and b in a)


def _norm(value: Any) -> Any:
    """A value as compared: a number as a number, a text by its letters and digits ("CSP+LDA"
    is "csp_lda")."""
    if isinstance(value, bool) or value is None:
        return value
    try:
        return round(float(value), 9)
    except (TypeError, ValueError):
        return re.sub(r"[\W_]+", "", str(value)).casefold()


def completed(d: Deps, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Suggested arguments with the fixes the tool's own check names applied too (a baseline
    outside the epoch beside a made-up threshold): one suggestion that runs, not one per round."""
    from pydantic import ValidationError

    from brainchat.tools.errors import fix_of

    model = getattr(d.runner.tools.get(tool), "args_schema", None)
    for _ in range(3):
        try:
            if model is not None and hasattr(model, "model_validate"):
                model.model_validate(args)
            return args
        except ValidationError as exc:
            fix = fix_of(exc)
            if not fix or fix.get("name") != tool or fix.get("arguments") == args:
                return args
            args = dict(fix.get("arguments") or {})
    return args
