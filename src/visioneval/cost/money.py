"""Dollar amounts as a person reads them: cents from a dollar up, three significant digits
below (a loopback run's cost is a few millionths of a dollar)."""

from __future__ import annotations

import math


def usd(value: float | None, missing: str = "unknown") -> str:
    """$1,234.57, $0.0123, $0.00000456; $0 for nothing; `missing` for None."""
    if value is None:
        return missing
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    decimals = min(12, 2 - math.floor(math.log10(value)))
    return f"${value:.{decimals}f}"
