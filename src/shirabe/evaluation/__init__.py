"""Measuring answers: case files, metrics and baselines, and batch answering of a CSV."""
