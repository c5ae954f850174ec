"""Layout metrics: pure functions over numpy arrays of boxes (x, y, w, h), one module per
family. Each returns a dict under CANVAS's metric key names (new keys for the scores we
add); a value that cannot be computed is an `Absent` with the reason, and an exception is
turned into a `<family>_error` entry by the pipeline."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Absent:
    """A metric that cannot be computed for this sample, and why (never stored as 0)."""

    reason: str
