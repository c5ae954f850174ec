"""Number formatting shared by tables, reports and comparisons."""

from __future__ import annotations


def pct(value: float | None, *, signed: bool = False, missing: str = "") -> str:
    """A fraction as percent with one decimal (`+` sign when `signed`); `missing` for None."""
    if value is None:
        return missing
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"
