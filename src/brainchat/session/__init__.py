"""One conversation, headless: mode, effective settings, history, EEG study, tools. No Chainlit.

The Chainlit app keeps one `Session` per browser session; the CLI makes one per command; tests
make them directly. `ask` dispatches a question to Chat or Agent mode and yields events;
`snapshot()` / `restore()` carry a conversation's state from one session to another.
"""

from brainchat.session.core import EDIT_KEEPS_STUDY, Session
from brainchat.session.snapshot import Snapshot
from brainchat.session.transcript import Turn
from brainchat.settings.load import NOT_CONFIGURED

__all__ = ["EDIT_KEEPS_STUDY", "NOT_CONFIGURED", "Session", "Snapshot", "Turn"]
