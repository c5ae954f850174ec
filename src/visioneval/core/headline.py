"""A run's main number (`Headline`), as a list of runs shows it: what it is, its value, its
95% interval and the samples behind it, or why it cannot be read. Each benchmark's
definition reads its own from metrics.json (`BenchmarkDefinition.headline`); `from_block`
reads the shape most metrics blocks share (a figure `k` beside `k_ci95`, or
`k_ci95_unavailable`, `n` and `unavailable`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from visioneval.stats.bootstrap import few_clusters_note


@dataclass(frozen=True)
class Headline:
    """One number of a run. `percent`: the value and interval are fractions shown in
    percent; else they are in `unit`. A value that could not be computed is None and
    `unavailable` says why (never 0); an interval's end may be None (open: a psychometric
    threshold whose refits went below or beyond the tested levels)."""

    label: str
    value: float | None = None
    interval: tuple[float | None, float | None] | None = None
    n: int | None = None
    percent: bool = True
    unit: str = ""
    unavailable: str | None = None
    interval_unavailable: str | None = None
    interval_note: str | None = None  # e.g. too few images for the interval's measured 95%

    def _number(self, value: float) -> str:
        return f"{100 * value:.1f}" if self.percent else f"{value:.3g}"

    @property
    def value_text(self) -> str:
        """"62.5%", "12.3 deg"; "-" without a value."""
        if self.value is None:
            return "-"
        return f"{self._number(self.value)}{'%' if self.percent else _spaced(self.unit)}"

    @property
    def interval_text(self) -> str:
        """"55.1 to 69.0" in the value's units ("1.78 or more" when open above, "up to 9.5"
        when open below); "-" without one."""
        if self.interval is None:
            return "-"
        low, high = self.interval
        if low is None:
            return "any tested level" if high is None else f"up to {self._number(high)}"
        if high is None:
            return f"{self._number(low)} or more"
        return f"{self._number(low)} to {self._number(high)}"

    @property
    def why(self) -> str:
        """What a reader needs besides the numbers: why there is no value, or no interval."""
        if self.value is None:
            return self.unavailable or "not computed"
        if self.interval is None:
            return f"no interval: {self.interval_unavailable or 'not computed'}"
        return self.interval_note or ""


def _spaced(unit: str) -> str:
    return f" {unit}" if unit else ""


def interval_of(found: Any) -> tuple[float | None, float | None] | None:
    """A metrics.json interval ([low, high], either end possibly null: open) as a pair; None
    for anything else."""
    if not isinstance(found, Sequence) or isinstance(found, str) or len(found) != 2:
        return None
    low, high = found
    if not (low is None or _finite(low)) or not (high is None or _finite(high)):
        return None
    return None if low is None else float(low), None if high is None else float(high)


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value)


def from_block(label: str, block: Mapping[str, Any] | None, key: str, *,
               percent: bool = True, unit: str = "") -> Headline:
    """The figure `key` of a metrics block in the common shape: `key`, `key_ci95` (or
    `key_ci95_unavailable`; over clusters `key_ci95_clusters` and `key_ci95_n_clusters`, a
    note below `stats.bootstrap.HOLDS_FROM`), `n`, and `unavailable` when nothing was
    scored."""
    if not isinstance(block, Mapping):
        return Headline(label, unavailable="not in metrics.json")
    n = block.get("n")
    count = n if isinstance(n, int) and not isinstance(n, bool) else None
    value = block.get(key)
    if not _finite(value):
        why = block.get("unavailable") or block.get(f"{key}_unavailable") or \
            f"no {key} in metrics.json"
        return Headline(label, n=count, percent=percent, unit=unit, unavailable=str(why))
    interval = interval_of(block.get(f"{key}_ci95"))
    missing = None if interval is not None else str(
        block.get(f"{key}_ci95_unavailable") or "not computed")
    return Headline(label, float(value), interval, count, percent, unit,
                    interval_unavailable=missing, interval_note=_few_clusters(block, key))


def _few_clusters(block: Mapping[str, Any], key: str) -> str | None:
    """The note an interval over few clusters carries (None: not clustered, or enough)."""
    count, by = block.get(f"{key}_ci95_n_clusters"), block.get(f"{key}_ci95_clusters")
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(by, str):
        return None
    return few_clusters_note(count, by)
