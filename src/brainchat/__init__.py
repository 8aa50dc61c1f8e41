"""brainchat: a conversational workbench for EEG research."""

from __future__ import annotations

__version__ = "0.1.0"
