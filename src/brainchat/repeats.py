"""Catching a reply that repeats itself: a small model stuck on one phrase writes it until its
length limit (one answer repeated the same line for 3,000 tokens). The guard watches the stream
and ends the reply once the same run of text has repeated many times; the reply keeps the run
once, and the user is told why it stopped."""

from __future__ import annotations

from dataclasses import dataclass

MAX_UNIT = 80  # longest repeated unit looked for, in characters (one line of text)
MIN_SPAN = 240  # characters the repetition must cover: a few table rules or "0, 0," are fine
MIN_REPEATS = 8  # ... and how many times the unit must repeat in a row
WINDOW = 2 * MAX_UNIT * MIN_REPEATS  # the tail of the stream that is checked
CHECK_EVERY = 24  # characters of new text between checks: the check stays off the hot path


@dataclass(frozen=True)
class Repetition:
    unit: str  # the text that repeated
    times: int  # how many times in a row, at the end of the reply

    def shown(self, limit: int = 60) -> str:
        """The unit as a notice quotes it: from a sentence's (else a word's) start, on one line,
        at most `limit` characters. The stream may have been checked mid-phrase."""
        u = self.unit
        starts = [i for i in range(len(u)) if u[i - 1].isspace() and not u[i].isspace()]
        sentences = [i for i in starts if u[i - 2] in ".!?:\n"]
        at = (sentences or starts or [0])[0]
        flat = " ".join((u[at:] + u[:at]).split())
        return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class RepeatGuard:
    """Feed it the streamed text; `feed` returns a Repetition once the tail is one unit repeated
    (covering MIN_SPAN characters and MIN_REPEATS times), else None."""

    def __init__(self) -> None:
        self.tail = ""
        self._fresh = 0

    def feed(self, piece: str) -> Repetition | None:
        if not piece:
            return None
        self.tail = (self.tail + piece)[-WINDOW:]
        self._fresh += len(piece)
        if self._fresh < CHECK_EVERY:
            return None
        self._fresh = 0
        return find_repetition(self.tail)


def find_repetition(text: str) -> Repetition | None:
    """The shortest unit that `text` ends with, repeated enough to be a loop, or None."""
    for size in range(1, MAX_UNIT + 1):
        times = max(MIN_REPEATS, -(-MIN_SPAN // size))
        if size * times > len(text):
            return None
        unit = text[-size:]
        if unit.strip() and text.endswith(unit * times):
            while text.endswith(unit * (times + 1)):
                times += 1
            return Repetition(unit, times)
    return None


def without_repeats(text: str, rep: Repetition) -> str:
    """`text` with its final run of repeats kept once."""
    while text.endswith(rep.unit * 2):
        text = text[: -len(rep.unit)]
    return text


def repeat_notice_text(name: str, rep: Repetition) -> tuple[str, str]:
    """What the user reads when a reply was ended for repeating itself, and what to do."""
    return (
        f"{name}'s reply kept repeating “{rep.shown()}” ({rep.times} times in a row), so it "
        "was ended there.",
        "Ask again, maybe more specifically; a larger model, or a lower temperature in the "
        "model's spec, repeats itself less.",
    )
