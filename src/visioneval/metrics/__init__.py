"""Metrics several benchmarks share."""
