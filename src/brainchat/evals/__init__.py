"""Golden-set evaluation: scenario files in evals/, run against model pairs, scored by checks."""
