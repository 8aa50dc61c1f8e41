"""Units of measure: the one an argument's description names, and the one written after a number.

A request's "0.5-2.5 秒" writes seconds, so its 0.5 and 2.5 are no frequencies; "500 ms" writes
half a second. A value is the user's for an argument with a unit only where the request writes
it in a unit of the same kind, scaled ("500 ms" is 0.5 for an argument in seconds), or with no
unit at all. Words are matched in the languages brainchat's users write; a unit missing here is
read as none, which checks nothing (lenient, never strict).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from brainchat.grounding.lexicon import words


class Unit(NamedTuple):
    kind: str  # what it measures: units of one kind convert into each other
    scale: float  # in the kind's base unit


# the longer word first where one holds another (毫秒 holds 秒, ms starts like m)
UNITS: dict[str, tuple[Unit, re.Pattern[str]]] = {
    "kHz": (Unit("frequency", 1e3), words(["khz", "kilohertz"], ["千赫兹", "千赫茲"])),
    "Hz": (Unit("frequency", 1.0), words(["hz", "hertz"], ["赫兹", "赫茲", "赫"])),
    "ms": (
        Unit("time", 1e-3),
        words(["ms", "msecs?", "milliseconds?", "millisekunden", "millisecondes?"], ["毫秒"]),
    ),
    "s": (
        Unit("time", 1.0),
        words(
            ["s", "secs?", "seconds?", "sekunden?", "secondes?", "segundos?"],
            ["秒钟", "秒鐘", "秒"],
        ),
    ),  # fmt: skip
    "min": (Unit("time", 60.0), words(["min", "mins", "minutes?", "minuten"], ["分钟", "分鐘"])),
    "µV": (
        Unit("voltage", 1e-6),
        words(["µv", "μv", "uv", "microvolts?", "mikrovolt"], ["微伏"]),
    ),
    "mV": (Unit("voltage", 1e-3), words(["mv", "millivolts?"], ["毫伏"])),
}

# a minus is a sign only where no word or number stands right before it ("from -0.5 s"; the
# "-" of "8-30" and "sub-01" is none)
NUMBER = re.compile(r"(?:(?<![\w.])-)?(?<![\d.])\d+(?:\.\d+)?")
TAIL = 64  # characters after a number where its unit may stand (past a range or a short list)
# a number that is part of a name: "sub-01", "ses_2", "C3", "P300" (a Latin letter right before
# it, or with one hyphen or underscore between)
_IN_NAME = re.compile(r"[A-Za-z][-_]?$")
# what may stand between a number and its unit: the rest of a range or a list written once with
# one unit ("8-30 Hz", "0.5 到 2.5 秒", "50, 100 Hz", "8 and 30 Hz")
_BETWEEN = re.compile(
    r"(?:\s*(?:-|–|—|~|～|〜|to|bis|à|a|至|到|和|与|與|and|,|，|、)\s*-?\d+(?:\.\d+)?)*\s*",
    re.IGNORECASE,
)
# a unit word in a description: "in Hz", "[t0, t1] s before the cue", "relative to the event, s"
# (not the "s" of "file(s)" or of "subject's")
_TOKEN = re.compile(r"(?<![\w(\'’-])(µV|μV|uV|mV|kHz|Hz|ms|s)(?![\w)-])")


def unit_of(description: str) -> str | None:
    """The one unit an argument's description names ("line-noise frequencies in Hz": Hz); None
    where it names none or units of more than one kind."""
    found = {_canonical(m.group(1)) for m in _TOKEN.finditer(description or "")}
    kinds = {UNITS[u][0].kind for u in found if u in UNITS}
    return next(iter(found)) if len(found) == 1 and len(kinds) == 1 else None


def _canonical(token: str) -> str:
    return {"μV": "µV", "uV": "µV"}.get(token, token)


def written_after(request: str, end: int) -> str | None:
    """The unit written right after a number that ends at `end` (past the rest of a range or a
    list), or None. Only the next few characters are read: a long request's many numbers
    each look a bounded way ahead."""
    tail = request[end : end + TAIL]
    skip = _BETWEEN.match(tail)
    rest = tail[skip.end() :] if skip else tail
    for name, (_, pattern) in UNITS.items():
        match = pattern.match(rest)
        if match is not None and match.start() == 0:
            return name
    return None


def numbers(request: str, unit: str | None = None, *, names: bool = False) -> list[float]:
    """The numbers a request writes, each in `unit` where it names one: a number written in a
    unit of the same kind is converted ("500 ms" is 0.5 in s), one written in a unit of another
    kind is left out ("2.5 秒" is no frequency); with no `unit`, every number as written. The
    digits of a name ("sub-01", "C3") count only with `names` (a label such as a subject's)."""
    want = UNITS.get(unit) if unit else None
    found = []
    for match in NUMBER.finditer(request):
        if not names and _IN_NAME.search(request[max(0, match.start() - 2) : match.start()]):
            continue
        value = float(match.group(0))
        if want is None:
            found.append(value)
            continue
        said = written_after(request, match.end())
        if said is None:
            found.append(value)
        elif UNITS[said][0].kind == want[0].kind:
            found.append(value * UNITS[said][0].scale / want[0].scale)
    return found
