"""Cross-validated decoding protocols (within-session, cross-session, cross-subject), their
pipelines and statistics, and the runner that spreads folds over local processes or a Dask
cluster (runner.py)."""
