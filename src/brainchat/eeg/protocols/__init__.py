"""Cross-validated decoding protocols (MOABB's within-session, cross-session, cross-subject),
pipelines fitted per fold, their statistics, and the runner that spreads folds over processes or a
Dask cluster. mne, pyriemann and torch load on first use."""
