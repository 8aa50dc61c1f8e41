"""The study taken home: a standalone analysis script and an HTML report."""
