"""The study's immutable state and its text views for the model. No I/O, no threads."""
