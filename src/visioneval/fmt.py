"""Number formatting shared by tables, reports and comparisons."""

from __future__ import annotations

from collections.abc import Sequence


def pct(value: float | None, *, signed: bool = False, missing: str = "") -> str:
    """A fraction as percent with one decimal (`+` sign when `signed`); `missing` for None."""
    if value is None:
        return missing
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def interval(bounds: Sequence[float] | None, *, joiner: str = " to ", missing: str = "-"
             ) -> str:
    """A [low, high] interval of fractions as percent with one decimal; `missing` for
    None (a metric with no interval)."""
    if not bounds:
        return missing
    return f"{100 * bounds[0]:.1f}{joiner}{100 * bounds[1]:.1f}"
