"""The tasks whose images vary a natural magnitude, and how a row's level is read from its
metadata: the gap between two circles that do not touch, and the closest approach of the
two line plots. Accuracy should rise from the guess rate as the magnitude grows, so a
psychometric function fitted to proportion correct against it gives a threshold
(`thresholds.py`; docs/decisions.md says why these two and no other).

- Two circles, `distance` ([P] src/TouchingCircle/TwoTouchingCircles.ipynb: the centres'
  gap minus the diameter, over the diameter): only rows with distance > 0, the circles
  apart, where both prompts' answer is "No" and the gap is what must be seen. A yes/no
  question: γ = 0.5.
- Line intersections, `distances` ([P] src/LineIntersection/2dline.ipynb: per each of the
  three x positions, |Δy| between the lines in cells of the 12-cell grid, floored, at
  least 1): the smallest of the three, the closest the lines come at a vertex. The answer
  is 0, 1 or 2 intersections: γ = 1/3."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.blindtest.spec import LINES, TOUCHING


@dataclass(frozen=True)
class Magnitude:
    """One fitted magnitude: its task, the metadata key it is read from, its unit and the
    guess rate of the task's question."""

    name: str  # the key in metrics.json's `thresholds`
    task: str
    key: str
    unit: str
    guess: float
    title: str

    def level(self, metadata: Mapping[str, Any]) -> float | None:
        """The row's level, or None when the row has none (or is not on the fitted side)."""
        value: Any = metadata.get(self.key)
        if self.key == "distances":
            if not isinstance(value, list) or not value or not all(map(_number, value)):
                return None
            value = min(value)
        return float(value) if _number(value) and value > 0 else None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value)


GAP = Magnitude("gap", TOUCHING, "distance", "diameters", 0.5, "Two circles: gap")
LINE_DISTANCE = Magnitude("line distance", LINES, "distances", "grid cells", 1 / 3,
                          "Line intersections: closest approach")
MAGNITUDES = (GAP, LINE_DISTANCE)
BY_TASK = {m.task: m for m in MAGNITUDES}


def level(task: str, metadata: Mapping[str, Any]) -> float | None:
    """The row's magnitude level when its task has one."""
    found = BY_TASK.get(task)
    return None if found is None else found.level(metadata)
