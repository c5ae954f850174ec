"""The charts of the graphical-perception stimuli, one drawing per encoding, each on a
320 x 320 white canvas in linear light (`stimuli.canvas`): two elements whose values stand
in the trial's ratio, each marked with a black dot, among unmarked ones. Which of the two
is larger, where they stand and the other elements' values are drawn from the stimulus's
own seed. Every drawing returns the canvas and the marked elements' geometry in pixels (the
value each element shows, in the encoding's own unit, and where its dot is)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.srgb import decode

SIZE = 320  # px, square
BACKGROUND = 1.0  # white
FILL = float(decode(150))  # bars, slices, circles: mid grey
INK = float(decode(64))  # axes and ticks: darker than any fill, lighter than a dot
DOT_RADIUS = 4.5
BELOW = 12.0  # a bar's or square's dot: this far below its bottom edge (centre to edge)
LARGEST = (0.55, 0.95)  # the larger marked value, as a share of the encoding's full range


@dataclass(frozen=True)
class Chart:
    """A drawn chart: the canvas, the value each marked element shows (in `unit`), their
    dots' centres, and anything else worth keeping in the trial."""

    canvas: Canvas
    unit: str
    larger: float
    smaller: float
    larger_dot: tuple[float, float]
    smaller_dot: tuple[float, float]
    extra: dict[str, float | int | str | bool]
    dithered: bool = False


def marked_values(rng: np.random.Generator, ratio: float, full: float) -> tuple[float, float]:
    """The larger marked value (55-95% of `full`) and the smaller, `ratio` of it."""
    larger = rng.uniform(*LARGEST) * full
    return larger, larger * ratio


def _rect(canvas: Canvas, x0: float, y0: float, x1: float, y1: float, lum: float) -> None:
    """An upright rectangle: a vertical line with butt ends as wide as the rectangle (the
    same coverage as a four-sided polygon, at a fraction of its cost)."""
    middle = (x0 + x1) / 2
    canvas.line((middle, y0), (middle, y1), x1 - x0, lum)


def _dot(canvas: Canvas, x: float, y: float) -> None:
    canvas.disc((x, y), DOT_RADIUS, 0.0)


def _scale(canvas: Canvas, axis_x: float, base: int, height: float, right: float,
           ticks: int) -> None:
    """A left axis with `ticks` + 1 tick marks from 0 to `height` and a baseline running
    to `right`, both on whole pixels, so a bar standing on the baseline meets it
    without a blended row."""
    _rect(canvas, axis_x - 2, base - height - 4, axis_x, base + 2, INK)
    _rect(canvas, axis_x - 2, base, right, base + 2, INK)
    for i in range(ticks + 1):
        y = base - round(i * height / ticks)
        _rect(canvas, axis_x - 8, y - 1, axis_x - 2, y, INK)


def common_scale(rng: np.random.Generator, ratio: float, larger_first: bool) -> Chart:
    """Position along a common scale: five bars on one baseline with one scale, two
    marked (Cleveland & McGill's grouped bars, type 1-3 judgments)."""
    canvas = Canvas(SIZE, SIZE, BACKGROUND)
    base, height, axis_x = 276, 220.0, 44.0
    _scale(canvas, axis_x, base, height, 300.0, 4)
    centres = [80.0 + 50.0 * i for i in range(5)]
    first, second = sorted(int(i) for i in rng.choice(5, 2, replace=False))
    larger, smaller = marked_values(rng, ratio, height)
    values = [rng.uniform(0.08, 0.95) * height for _ in centres]
    values[first], values[second] = (larger, smaller) if larger_first else (smaller, larger)
    for cx, value in zip(centres, values, strict=True):
        _rect(canvas, cx - 15, base - value, cx + 15, base, FILL)
    dots = [(centres[i], base + 2 + BELOW) for i in (first, second)]
    for x, y in dots:
        _dot(canvas, x, y)
    return Chart(canvas, "px", larger, smaller, *_ordered(dots, larger_first),
                 {"baseline_y": base, "scale_px": height, "bars": len(centres),
                  "bar_width": 30.0})


def nonaligned(rng: np.random.Generator, ratio: float, larger_first: bool) -> Chart:
    """Position along identical, non-aligned scales: two small bar charts side by side,
    the same scale each, one standing 30-60 px higher; one bar marked in each."""
    canvas = Canvas(SIZE, SIZE, BACKGROUND)
    height = 150.0
    shift = int(rng.integers(30, 61))
    lower_base = int(rng.integers(200, 291 - shift)) + shift
    bases = [lower_base, lower_base - shift]
    if rng.random() < 0.5:
        bases.reverse()
    larger, smaller = marked_values(rng, ratio, height)
    dots = []
    for panel, (axis_x, base) in enumerate(zip((40.0, 184.0), bases, strict=True)):
        _scale(canvas, axis_x, base, height, axis_x + 112, 2)
        marked = int(rng.integers(0, 2))
        for slot in range(2):
            cx = axis_x + 36 + 50 * slot
            value = ((larger if (panel == 0) == larger_first else smaller)
                     if slot == marked else rng.uniform(0.08, 0.95) * height)
            _rect(canvas, cx - 15, base - value, cx + 15, base, FILL)
            if slot == marked:
                dots.append((cx, base + 2 + BELOW))
    for x, y in dots:
        _dot(canvas, x, y)
    return Chart(canvas, "px", larger, smaller, *_ordered(dots, larger_first),
                 {"left_baseline_y": bases[0], "right_baseline_y": bases[1],
                  "scale_px": height, "bar_width": 30.0})


def length(rng: np.random.Generator, ratio: float, larger_first: bool) -> Chart:
    """Length: four bars floating at different heights with no axis, two marked; neither
    the marked bars' tops nor their bottoms line up (at least 20 px apart)."""
    canvas = Canvas(SIZE, SIZE, BACKGROUND)
    full, top, bottom_most = 190.0, 24.0, 292.0
    centres = [64.0 + 64.0 * i for i in range(4)]
    first, second = sorted(int(i) for i in rng.choice(4, 2, replace=False))
    larger, smaller = marked_values(rng, ratio, full)
    values = [rng.uniform(0.1, 0.95) * full for _ in centres]
    values[first], values[second] = (larger, smaller) if larger_first else (smaller, larger)
    for _ in range(1000):
        bottoms = [rng.uniform(top + v, bottom_most) for v in values]
        a, b = first, second
        if abs(bottoms[a] - bottoms[b]) >= 20 and \
                abs((bottoms[a] - values[a]) - (bottoms[b] - values[b])) >= 20:
            break
    for cx, value, bottom in zip(centres, values, bottoms, strict=True):
        _rect(canvas, cx - 12, bottom - value, cx + 12, bottom, FILL)
    dots = [(centres[i], bottoms[i] + BELOW) for i in (first, second)]
    for x, y in dots:
        _dot(canvas, x, y)
    return Chart(canvas, "px", larger, smaller, *_ordered(dots, larger_first),
                 {"bar_width": 24.0, "bars": len(centres)})


def pie(rng: np.random.Generator, ratio: float, larger_first: bool) -> Chart:
    """Angle: a pie of five slices parted by white lines, two marked with a dot inside,
    three quarters of the way to the rim (Cleveland & McGill's position-angle pies). The
    slices' order and the first one's angle are random, so `larger_first` has no use."""
    canvas = Canvas(SIZE, SIZE, BACKGROUND)
    cx, cy = SIZE / 2 + rng.uniform(-6, 6), SIZE / 2 + rng.uniform(-6, 6)
    radius = 118.0
    larger = rng.uniform(0.18, 0.32)
    smaller = larger * ratio
    while True:
        rest = rng.dirichlet((4.0, 4.0, 4.0)) * (1 - larger - smaller)
        if rest.min() >= 0.04:
            break
    order = [int(i) for i in rng.permutation(5)]  # slice 0: the larger marked; 1: smaller
    shares = [larger, smaller, *rest]
    start = rng.uniform(0, 360)
    canvas.disc((cx, cy), radius, FILL)
    edges, dots, at = [], {}, start
    for slice_index in order:
        edges.append(at)
        span = shares[slice_index] * 360
        if slice_index < 2:
            middle = math.radians(at + span / 2)
            dots[slice_index] = (cx + 0.78 * radius * math.cos(middle),
                                 cy - 0.78 * radius * math.sin(middle))
        at += span
    for edge in edges:
        theta = math.radians(edge)
        canvas.line((cx, cy), (cx + (radius + 3) * math.cos(theta),
                               cy - (radius + 3) * math.sin(theta)), 2.0, BACKGROUND)
    for x, y in dots.values():
        _dot(canvas, x, y)
    return Chart(canvas, "deg", larger * 360, smaller * 360, dots[0], dots[1],
                 {"centre_x": cx, "centre_y": cy, "radius": radius, "slices": 5,
                  "start_deg": start})


def circles(rng: np.random.Generator, ratio: float, larger_first: bool) -> Chart:
    """Area: four circles in a 2 x 2 grid, two marked with a dot at the centre; a value is
    the circle's area (the radius goes with its square root)."""
    canvas = Canvas(SIZE, SIZE, BACKGROUND)
    most = 70.0
    cells = [(80.0, 80.0), (240.0, 80.0), (80.0, 240.0), (240.0, 240.0)]
    first, second = sorted(int(i) for i in rng.choice(4, 2, replace=False))
    full = math.pi * most ** 2
    larger_radius = most * math.sqrt(rng.uniform(*LARGEST))
    smaller_radius = larger_radius * math.sqrt(ratio)
    radii = [most * math.sqrt(rng.uniform(0.1, 1.0)) for _ in cells]
    radii[first], radii[second] = ((larger_radius, smaller_radius) if larger_first
                                   else (smaller_radius, larger_radius))
    centres = [(x + rng.uniform(-6, 6), y + rng.uniform(-6, 6)) for x, y in cells]
    for centre, r in zip(centres, radii, strict=True):
        canvas.disc(centre, r, FILL)
    dots = [centres[first], centres[second]]
    for x, y in dots:
        _dot(canvas, x, y)
    return Chart(canvas, "px2", math.pi * larger_radius ** 2, math.pi * smaller_radius ** 2,
                 *_ordered(dots, larger_first),
                 {"larger_radius": larger_radius, "smaller_radius": smaller_radius,
                  "full_area": full})


def shading(rng: np.random.Generator, ratio: float, larger_first: bool) -> Chart:
    """Shading: four squares whose darkness shows their values (white is 0; darkness is
    1 − L*/100, CIE lightness of the square on the white page, at most 0.8), two marked by
    a dot below; dithered, so each square's mean luminance is exactly its own."""
    canvas = Canvas(SIZE, SIZE, BACKGROUND)
    darkest = 0.8
    squares = [(46, 36), (190, 36), (46, 184), (190, 184)]  # top-left corners, 84 px sides
    side = 84
    first, second = sorted(int(i) for i in rng.choice(4, 2, replace=False))
    larger, smaller = marked_values(rng, ratio, darkest)
    values = [rng.uniform(0.08, darkest) for _ in squares]
    values[first], values[second] = (larger, smaller) if larger_first else (smaller, larger)
    for (x, y), value in zip(squares, values, strict=True):
        _rect(canvas, x, y, x + side, y + side, luminance_of_darkness(value))
    dots = [(squares[i][0] + side / 2, squares[i][1] + side + BELOW) for i in (first, second)]
    for dot_x, dot_y in dots:
        _dot(canvas, dot_x, dot_y)
    return Chart(canvas, "darkness", larger, smaller, *_ordered(dots, larger_first),
                 {"side": side, "darkest": darkest}, dithered=True)


def _ordered(dots: list[tuple[float, float]], larger_first: bool
             ) -> tuple[tuple[float, float], tuple[float, float]]:
    """(the larger's dot, the smaller's) from the dots in drawing order."""
    return (dots[0], dots[1]) if larger_first else (dots[1], dots[0])


def luminance_of_darkness(darkness: float) -> float:
    """The relative luminance whose CIE lightness L* is 100 (1 − darkness) (CIE 15:2004:
    L* = 116 f(Y) − 16, f(Y) = Y^(1/3) above (6/29)^3, linear below)."""
    f = (100 * (1 - darkness) + 16) / 116
    return f ** 3 if f > 6 / 29 else 3 * (6 / 29) ** 2 * (f - 4 / 29)


def darkness_of_luminance(luminance: float) -> float:
    """1 − L*/100 of a relative luminance (the inverse of `luminance_of_darkness`)."""
    y = max(luminance, 0.0)
    f = y ** (1 / 3) if y > (6 / 29) ** 3 else y / (3 * (6 / 29) ** 2) + 4 / 29
    return 1 - (116 * f - 16) / 100
