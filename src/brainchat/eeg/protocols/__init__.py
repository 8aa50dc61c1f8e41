"""Cross-validated decoding protocols (MOABB's within-session, cross-session, cross-subject),
pipelines fitted per fold, and their statistics. mne, pyriemann and torch load on first use."""
