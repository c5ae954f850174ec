"""Uncertainty of the metrics: bootstrap standard errors and intervals over samples."""
