"""Scoring: the statistics results are reported with (`stats`: Wilson intervals, bootstraps over boards,
paired improvements); the home of `ptbench score`'s aggregation."""
