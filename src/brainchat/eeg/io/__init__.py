"""Reading EEG files: the data folder and its rule, the readers and their safety checks, listing,
the synthetic demo set."""
