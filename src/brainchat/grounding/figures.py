"""Figures: which numbers an answer states, and whether the run shows each one.

A figure is shown when a tool's arguments or result, a source, the user's messages or the
study's summary hold the same value (as written, rounded to the figure's decimals, or as a
percentage) *of the same kind*: "22 events" is not shown by "22 ch". A figure derived from shown
ones is shown too: the difference, ratio or sum of two figures of the same sentence ("6.9 points
(0.812 vs 0.743)"), the product of two counts of one result (4 files × 48 trials), and the
total of a result's labelled counts ("left_hand 10, right_hand 10" shows 20).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

# a figure: not part of a name (sub-01, v2), a range's end (8-30), a citation marker ([1]) or a
# clock (14:00); a unit may follow it directly (8Hz). A number in a list or matrix ("[[20, 0],
# [1, 18]]", a confusion matrix) is a figure. Bounded look-behind: each match is O(1).
NUMBER = re.compile(
    r"(?<![A-Za-z0-9_./#\-–:])(?!(?<=\[)\d+\])(\d+(?:\.\d+)?)(\s?[%％])?"
    r"(?=(?:k?Hz|ms|s|µV|μV|uV)\b|[^A-Za-z0-9_:]|$)"
)
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # 1,000 -> 1000
# what may stand between a figure and its unit: a CJK measure word, up to two English words
# ("8 held-out test epochs"), bounded so a long text stays linear
GAP = re.compile(
    r"[ \t]{0,3}(?:[个個名次条條段项項份组組位例]\s{0,2})?(?:[A-Za-z-]{1,20}[ \t]{1,3}){0,2}"
)
P_BEFORE = re.compile(
    r"(?:\bp|P)(?:[ -]?values?|\s?值)?\s{0,2}(?:=|<|>|≈|≤|of|is|was|为|為|是|:)?\s{0,2}$"
)
LIST_ITEM = re.compile(r"^\s*(?:\d+[.)、]|[-*•]\s*\d+[.)、])\s")  # "1. Load", "2、滤波"
MAX_PAIRED = 60  # counts of one text multiplied pairwise: bounded work


@dataclass(frozen=True)
class Figure:
    """A number as written: its value, whether it may be a percentage, and its kind."""

    text: str
    value: float
    percent: bool  # written with a % sign
    kind: str | None  # the quantity its unit names (channels, hz, p ...); None: unknown

    @property
    def decimals(self) -> int:
        return len(self.text.split(".")[1]) if "." in self.text else 0

    @property
    def may_be_percent(self) -> bool:
        """A decimal or a % figure may be a percentage; a bare whole number never is (1
        permutation is not 1 %)."""
        return "." in self.text or self.percent


def figures(text: str, units: dict[str, re.Pattern[str]]) -> list[Figure]:
    """Every number in `text` with its kind, read from the words around it."""
    text = THOUSANDS.sub("", text)
    found = []
    for m in NUMBER.finditer(text):
        number, pct = m.group(1), m.group(2)
        before = text[max(0, m.start() - 40) : m.start()]
        kind = "p" if P_BEFORE.search(before[-14:]) else None
        if kind is None and not pct:
            kind = _unit(text, m.end(), units) or _label(before, units)
        found.append(Figure(number, float(number), bool(pct), kind))
    return found


def _unit(text: str, end: int, units: dict[str, re.Pattern[str]]) -> str | None:
    """The kind of quantity named right after a figure, if any."""
    after = text[end : end + 48]
    gap = GAP.match(after)
    starts = {0, gap.end()} if gap else {0}
    for start in sorted(starts):
        rest = after[start:].lstrip()
        for kind, pattern in units.items():
            m = pattern.match(rest)
            if m is not None:
                return kind
    return None


LABEL_END = re.compile(r"[ \t]*[:=：][ \t]*$")  # "Events recorded: 22", "channels = 22"


def _label(before: str, units: dict[str, re.Pattern[str]]) -> str | None:
    """The kind a label before a figure names: the last unit word of the words that end in a
    colon or equals sign right before it ("Events recorded: 22", "通道数：22")."""
    end = LABEL_END.search(before)
    if end is None:
        return None
    label = re.split(r"[.;,，。；\n(（]", before[: end.start()])[-1]
    found = [(m.start(), kind) for kind, p in units.items() for m in p.finditer(label)]
    return max(found)[1] if found else None


# values a text shows that `figures` does not read as figures: a range's end ("400-1340 ms",
# "8-13 Hz") and a negative value ("-41.4 %", "t sum -188.8"). An answer may state them on their
# own ("until 1340 ms", "a 41.4 % drop"); a name's number (sub-01) is neither.
RANGE_END = re.compile(r"(?<![A-Za-z_\-])\d+(?:\.\d+)?\s?[-–]\s?(\d+(?:\.\d+)?)(\s?[%％])?")
NEGATIVE = re.compile(r"(?<![\w.\-–])[-−–](\d+(?:\.\d+)?)(\s?[%％])?")


def _unread(text: str, units: dict[str, re.Pattern[str]]) -> list[Figure]:
    found = []
    for pattern in (RANGE_END, NEGATIVE):
        for m in pattern.finditer(text):
            number, pct = m.group(1), m.group(2)
            kind = None if pct else _unit(text, m.end(), units)
            found.append(Figure(number, float(number), bool(pct), kind))
    return found


def states_a_result(figure: Figure) -> bool:
    """A decimal, a percentage, or a whole number from 10 up (not '2 files' or 'step 3')."""
    return "." in figure.text or figure.percent or figure.value >= 10


class Shown:
    """Every figure the run shows, and the counts its results' sums and products make."""

    def __init__(self, texts: Iterable[str], units: dict[str, re.Pattern[str]]) -> None:
        self.figures: list[Figure] = []
        self.counts: set[float] = set()  # products and totals of one text's counts
        for text in texts:
            own = figures(text, units)
            self.figures += own + _unread(text, units)
            self.counts.update(_combined(text, own))

    def holds(self, f: Figure) -> bool:
        """`f` is a shown value of a compatible kind, or a count derived from one result."""
        if any(_same(f, k) and _compatible(f.kind, k.kind) for k in self.figures):
            return True
        return "." not in f.text and not f.percent and f.value in self.counts

    def has_value(self, f: Figure) -> bool:
        """The run shows `f`'s value, of whatever kind."""
        return any(_same(f, k) for k in self.figures)

    def kinds_of(self, f: Figure) -> list[str]:
        """The kinds the run shows `f`'s value as (for saying why it does not fit)."""
        return sorted({k.kind for k in self.figures if _same(f, k) and k.kind})


def derived(f: Figure, same_sentence: list[Figure]) -> bool:
    """`f` is the difference, ratio or sum of two shown figures of its sentence, in their
    units or in percentage points."""
    for a, b in itertools.permutations(same_sentence, 2):
        if a is f or b is f:
            continue
        values = [a.value - b.value, a.value + b.value]
        if b.value:
            values.append(a.value / b.value)
        values += [v * 100 for v in values[:1]] + [v / 100 for v in values[:1]]
        if b.value:
            values.append((a.value - b.value) / b.value * 100)  # relative change, in %
        if any(_close(f, abs(v)) for v in values):
            return True
    return False


def _close(f: Figure, value: float) -> bool:
    tol = 0.5 * 10**-f.decimals + 1e-9
    return abs(f.value - value) <= tol or (f.percent and abs(f.value / 100 - value) <= tol / 100)


def _same(f: Figure, k: Figure) -> bool:
    """`f` is `k` as written, rounded to f's decimals, or as a percentage of it."""
    tol = 0.5 * 10**-f.decimals + 1e-9
    if abs(k.value - f.value) <= tol or abs(k.value - f.value / 100) <= tol / 100:
        return True  # 93.5% is 0.935
    # 0.935 is 93.5 (%), but only from a number that may be a percentage
    return not f.percent and k.may_be_percent and abs(k.value - f.value * 100) <= tol * 100


STRICT = ("p",)  # a p-value is shown only by a p-value, never by a score that equals it


def _compatible(kind: str | None, other: str | None) -> bool:
    if kind in STRICT:
        return other == kind
    return kind is None or other is None or kind == other


# a list of labelled counts ("events: left_hand 10, right_hand 10"): its total is shown too; a
# label starts only where no word goes on before it, so a long word is scanned once
COUNTS = re.compile(r"(?<![\w-])[A-Za-z_][\w-]* \d+(?![\d.])(?:, [A-Za-z_][\w-]* \d+(?![\d.]))+")


def _combined(text: str, own: list[Figure]) -> set[float]:
    """Totals of the labelled count lists, the grand total of lists with the same labels (four
    recordings' "left_hand 24, right_hand 24" show 192), and pairwise sums and products of the
    text's whole numbers above 1 (at most MAX_PAIRED of them: "17 kept; 3 rejected" shows 20)."""
    out: set[float] = set()
    grand: dict[tuple[str, ...], int] = {}
    for m in COUNTS.finditer(text):
        pairs = re.findall(r"([A-Za-z_][\w-]*) (\d+)", m.group())
        total = sum(int(n) for _, n in pairs)
        out.add(float(total))
        labels = tuple(label for label, _ in pairs)
        grand[labels] = grand.get(labels, 0) + total
    out.update(float(t) for t in grand.values())
    whole = [f.value for f in own if "." not in f.text and not f.percent and f.value > 1]
    whole = list(dict.fromkeys(whole))[:MAX_PAIRED]
    for a, b in itertools.combinations_with_replacement(whole, 2):
        out.update((a * b, a + b))
    return out
