"""Benchmarks: dataset readers, runner, scorer, reports."""
