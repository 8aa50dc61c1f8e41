"""Analyses that report on the data without changing it; their registry is eeg/core/analyses.py."""
