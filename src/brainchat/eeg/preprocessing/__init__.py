"""Loading and preprocessing a study, epoching and splitting it, and the figures of its data."""
