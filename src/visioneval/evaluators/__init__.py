"""Evaluators for free-form answers about images: rubric judges and code validators, one
result format (`visioneval.validators.result`)."""
