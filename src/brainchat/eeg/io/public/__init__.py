"""Public EEG data sets fetched by name into the data folder: MOABB's (catalog.py, moabb_fetch.py)
and OpenNeuro's BIDS data sets (openneuro.py), over one bounded, resumable HTTP download
(download.py). Only fixed hosts are reached: OpenNeuro's bucket (or the operator's mirror) and the
hosts MOABB itself downloads from; a name from the model is checked against a strict pattern and
never becomes a URL or a path by itself."""
