"""The study of one chat session: run atomically, logged, replayed, its models saved, its memory
guarded."""
