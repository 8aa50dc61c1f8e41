"""`brainchat ask`: what a checked answer changes, shown in the terminal.

The browser replaces the streamed answer with the checked one (AnswerChecked). A terminal cannot
take back what it printed, so it prints what the checked answer adds: a block appended under the
answer (a result's figures) as that block; marks on flagged sentences as the list of flags
(cli.event_text); any other change (source numbers placed in the text, an answer replaced) as the
whole checked answer under a heading.
"""

from __future__ import annotations

from brainchat import events as ev
from brainchat.grounding import Flag, mark


class CheckedAnswer:
    """The answer as the terminal has shown it so far, in one run."""

    def __init__(self) -> None:
        self.shown = ""

    def extra(self, event: ev.Event) -> str:
        """What to print for `event` beyond cli.event_text: "" except for a checked answer that
        changes what was shown."""
        if isinstance(event, ev.AnswerToken):
            self.shown += event.text
            return ""
        if not isinstance(event, ev.AnswerChecked):
            return ""
        before, self.shown = self.shown, event.text
        if event.text == before:
            return ""
        if event.flags and mark(before, [Flag(**f) for f in event.flags]) == event.text:  # type: ignore[arg-type]
            return ""  # only flagged sentences marked: the flags are listed
        if event.text.startswith(before):  # added under the answer
            return event.text[len(before) :].strip("\n") + "\n"
        return "\n· the answer as brainchat checked it:\n" + event.text.strip() + "\n"
