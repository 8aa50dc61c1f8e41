"""BIDS datasets: reading recordings by their entities with events.tsv as annotations, listing a
BIDS root as subjects/sessions, and writing epochs and results as BIDS derivatives.

Every module here keeps mne-bids (and MNE) lazy: they are imported inside the functions that
read or write files, never at import time.
"""
