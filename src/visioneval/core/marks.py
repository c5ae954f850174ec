"""Which value of a comparison column is marked best (`visioneval compare`: the page, the
Markdown table and the terminal all ask this module). A value is marked only when it is
ahead of every other run's value in its column beyond both 95% intervals: a 20-sample run
that scores one point above a 600-sample run is not "best", its interval covers the other's.
Without intervals (an older run, fewer than 2 scored samples) nothing can be shown to be
ahead, so nothing is marked; the note under the table says why a column has no mark."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

Interval = tuple[float, float]
"""(low, high) in the units of the cell it belongs to."""


def percent(found: Sequence[float] | None) -> Interval | None:
    """A metrics.json interval of fractions ([low, high]) in percent, as compare's cells
    are; None when the run has none."""
    return None if not found or len(found) != 2 else (100 * found[0], 100 * found[1])


class Why(Enum):
    """A column's outcome."""
    MARKED = "marked"
    OVERLAP = "overlap"  # the best value's interval meets another run's (or they are equal)
    NO_INTERVAL = "no interval"  # the best value or another run's has no interval


@dataclass(frozen=True)
class Verdict:
    column: int
    label: str  # the column's header
    row: int | None  # the marked row (MARKED only)
    why: Why


def _ahead(best: Interval, other: Interval, higher_is_better: bool) -> bool:
    """`best` is beyond `other`: its whole interval above (or below) the other's; touching
    ends overlap."""
    return best[0] > other[1] if higher_is_better else best[1] < other[0]


def verdict(values: Sequence[float | None], intervals: Sequence[Interval | None],
            higher_is_better: bool) -> tuple[int | None, Why] | None:
    """(marked row or None, why) for one column's values (None: no value) and their 95%
    intervals; None when fewer than two runs have a value (nothing to rank)."""
    known = [(i, v) for i, v in enumerate(values) if v is not None and not math.isnan(v)]
    if len(known) < 2:
        return None
    pick = max if higher_is_better else min
    top = pick(v for _, v in known)
    leaders = [i for i, v in known if v == top]
    others = [i for i, _ in known if i != leaders[0]]
    spans = [intervals[i] if i < len(intervals) else None for i, _ in known]
    if any(span is None for span in spans):
        return None, Why.NO_INTERVAL
    if len(leaders) > 1:
        return None, Why.OVERLAP
    best = intervals[leaders[0]]
    assert best is not None
    if all(_ahead(best, span, higher_is_better)
           for span in (intervals[i] for i in others) if span is not None):
        return leaders[0], Why.MARKED
    return None, Why.OVERLAP


PERCENT = "Values in percent."
MARK_RULE = ("Bold: a value whose 95% interval lies wholly beyond every other run's in its "
             "column (above them; below them where lower is better).")


def notes(verdicts: Sequence[Verdict], intervals_shown: bool, units: str = PERCENT
          ) -> list[str]:
    """The lines under a table: the units and the rule, then the columns left unmarked and
    why. With `intervals_shown` (the page) each value's interval is in its cell; elsewhere
    the reader is pointed to them."""
    where = ("each value's interval is under it" if intervals_shown else
             "the intervals are in comparison.html and each run's metrics.json")
    lines = [f"{units} {MARK_RULE[:-1]}; {where}."]
    overlap = [v.label for v in verdicts if v.why is Why.OVERLAP]
    missing = [v.label for v in verdicts if v.why is Why.NO_INTERVAL]
    if overlap:
        lines.append(f"No mark in {_names(overlap, verdicts)}: no run is ahead beyond its "
                     "interval.")
    if missing:
        lines.append(f"No mark in {_names(missing, verdicts)}: a run's value there has no 95% "
                     "interval "
                     "(fewer than 2 scored samples, a run written before intervals were "
                     "recorded, or a share with none), so no run can be shown to be ahead.")
    return lines


def _names(labels: list[str], verdicts: Sequence[Verdict]) -> str:
    return "any column" if len(labels) == len(verdicts) > 2 else ", ".join(labels)
