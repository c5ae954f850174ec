"""One array of dots: equal discs scattered at random in a circular field, never touching,
and the non-numerical features that come with it (its total dot area, the area of its
convex hull), so that each trial can store them and a reader can check what a model might
have answered from instead of the number."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GAP = 3.0  # px: the least distance between two dots' edges, so no two dots look like one
TRIES = 4000  # placements tried per dot before the layout starts again


@dataclass(frozen=True)
class DotArray:
    """`n` discs of one `radius` (px) whose centres lie within `field_radius` of
    `field_centre`, less the radius (every dot wholly inside the field)."""

    centres: tuple[tuple[float, float], ...]
    radius: float
    field_centre: tuple[float, float]
    field_radius: float

    @property
    def n(self) -> int:
        return len(self.centres)

    @property
    def total_area(self) -> float:
        """The dots' summed area, px²."""
        return self.n * math.pi * self.radius ** 2

    @property
    def hull_area(self) -> float:
        """The area of the convex hull of the dots as drawn, px²: the hull of the centres
        grown by the radius (its area plus its perimeter times r plus πr², exact for equal
        discs)."""
        hull = convex_hull(self.centres)
        return polygon_area(hull) + polygon_perimeter(hull) * self.radius + \
            math.pi * self.radius ** 2

    def text(self) -> str:
        """The centres as "x,y;x,y;..." to 0.01 px, for the trial's geometry."""
        return ";".join(f"{x:.2f},{y:.2f}" for x, y in self.centres)


def scatter(rng: np.random.Generator, n: int, radius: float,
            field_centre: tuple[float, float], field_radius: float) -> DotArray:
    """`n` dots placed one by one, each uniformly within the field, again where it would
    come within `GAP` of a placed dot; the whole layout starts again when a dot finds no
    place (a dense field). ValueError when the dots cannot fit at all."""
    reach = field_radius - radius
    if reach <= 0 or n * (2 * radius + GAP) ** 2 > 0.9 * math.pi * field_radius ** 2:
        raise ValueError(f"{n} dots of radius {radius:.3g} px do not fit a field of radius "
                         f"{field_radius:.3g} px")
    least = (2 * radius + GAP) ** 2
    cx, cy = field_centre
    for _ in range(100):
        placed = np.empty((n, 2))
        count = 0
        for _ in range(TRIES * n):
            angle = rng.uniform(0.0, 2.0 * math.pi)
            distance = reach * math.sqrt(rng.uniform(0.0, 1.0))
            point = (cx + distance * math.cos(angle), cy + distance * math.sin(angle))
            if count and (((placed[:count] - point) ** 2).sum(axis=1) < least).any():
                continue
            placed[count] = point
            count += 1
            if count == n:
                return DotArray(tuple((float(x), float(y)) for x, y in placed), radius,
                                field_centre, field_radius)
    raise ValueError(f"could not place {n} dots of radius {radius:.3g} px in a field of "
                     f"radius {field_radius:.3g} px")


def convex_hull(points: tuple[tuple[float, float], ...]) -> list[tuple[float, float]]:
    """The hull's corners, counter-clockwise (Andrew's monotone chain)."""
    ordered = sorted(set(points))
    if len(ordered) < 3:
        return ordered

    def turn(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    upper: list[tuple[float, float]] = []
    for point in ordered:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], point) <= 0:
            lower.pop()
        lower.append(point)
    for point in reversed(ordered):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], point) <= 0:
            upper.pop()
        upper.append(point)
    return lower[:-1] + upper[:-1]


def polygon_area(corners: list[tuple[float, float]]) -> float:
    """The shoelace formula; 0 for fewer than three corners."""
    if len(corners) < 3:
        return 0.0
    return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1)
                   in zip(corners, corners[1:] + corners[:1], strict=True))) / 2


def polygon_perimeter(corners: list[tuple[float, float]]) -> float:
    """The length around the corners (twice the segment for two points)."""
    if len(corners) < 2:
        return 0.0
    return sum(math.dist(a, b) for a, b in zip(corners, corners[1:] + corners[:1],
                                               strict=True))
