"""The headless EEG study and its tools. mne, torch and matplotlib load on first use only."""

import os

# MNE's per-call `verbose="error"` swaps its global log level and puts it back afterwards, which
# is not thread-safe: with studies running in several worker threads at once, one call can
# restore INFO while another logs, and "Creating RawArray ..." lands on stdout (breaking
# `brainchat eval --json` lines). Quiet from the start, every restore is to a quiet level.
os.environ.setdefault("MNE_LOGGING_LEVEL", "error")
