"""The Wilson score interval of a proportion (Wilson 1927), for proportions correct per level
and for Newcombe's interval of a difference of two proportions."""

from __future__ import annotations

import math

from visioneval.stats.detection import Z95


def wilson(k: float, n: float) -> tuple[float, float]:
    """The 95% Wilson score interval of k/n (n > 0), within [0, 1]."""
    p, z2 = k / n, Z95 ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)
