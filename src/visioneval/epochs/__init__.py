"""Repeated answers: every sample asked K times (`--epochs K`), the benchmark's tables of
the first answers, and beside them the item means and the variance split into between and
within items (docs/epochs.md)."""
