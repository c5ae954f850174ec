"""The builtin `reader` for the graphical-perception charts: a classical observer that
measures the two marked elements from the pixels and answers their ratio as a whole
percentage. It finds the dots (the only near-black blobs), learns the fill from the most
common grey, takes what the prompt says encodes the value (a pie's angle, a circle's area,
a square's darkness, else a bar's length) and measures it in linear light:

- a bar: straight up from its dot, the run of the bar's pixels in 15 columns, each pixel
  counted by its share of the fill's darkness (an anti-aliased end in part), the median
  over the columns; the axis below a bar is darker than any fill and ends the run;
- a slice: the pie's rim found along 360 rays and fitted with a circle (its centre), the
  white separators found around a circle inside the pie by the centroid of their light,
  and the angle between the two separators around the dot;
- a circle: the darkness summed over the connected blob around its dot;
- a square: the mean luminance inside the square above its dot (dithered squares average
  to their own luminance), as darkness 1 − L*/100.

It never reads the text chunk."""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image
from scipy import ndimage

from visioneval.benchmarks.graphical.charts import darkness_of_luminance
from visioneval.stimuli.srgb import decode

DOT_CODE = 24  # a dot's core is darker than this code; every fill and ink is lighter
BAR_COLUMNS = 7  # columns each side of a bar's dot


def read(prompt: str, png: bytes) -> str:
    found = measure(prompt, png)
    if found is None:
        return "50"
    small, large = sorted(found)
    return "0" if large <= 0 else f"{round(100 * small / large)}"


def measure(prompt: str, png: bytes) -> tuple[float, float] | None:
    """The two marked values, in the order of their dots (top to bottom, left to right),
    in the encoding's unit (px, degrees, px², darkness); None when there are not two dots."""
    with Image.open(io.BytesIO(png)) as image:
        codes = np.asarray(image.convert("L"), dtype=np.int64)
    luminance = decode(codes)
    dots = _dots(codes)
    if len(dots) != 2:
        return None
    text = prompt.lower()
    if "darkness" in text:
        a, b = (_square(luminance, dot) for dot in dots)
        return a, b
    coverage = _coverage(codes, luminance)
    if "pie" in text:
        found = _slices(coverage, dots)
        return found
    if "circle" in text:
        a, b = (_blob(coverage, dot) for dot in dots)
        return a, b
    a, b = (_bar(coverage, dot) for dot in dots)
    return a, b


def _dots(codes: np.ndarray) -> list[tuple[float, float]]:
    """The centroids (x, y, in pixel units) of the near-black blobs of a dot's size."""
    labels, count = ndimage.label(codes < DOT_CODE)
    out = []
    for index in range(1, count + 1):
        rows, cols = np.nonzero(labels == index)
        if 10 <= rows.size <= 120:
            out.append((float(cols.mean()) + 0.5, float(rows.mean()) + 0.5))
    return sorted(out, key=lambda d: (round(d[1] / 8), d[0]))


def _coverage(codes: np.ndarray, luminance: np.ndarray) -> np.ndarray:
    """Each pixel's share of the fill's darkness against the white page: 0 white, 1 the
    fill, above 1 darker (axes, dots)."""
    greys = codes[(codes > 40) & (codes < 250)]
    fill = float(decode(np.bincount(greys).argmax())) if greys.size else 0.5
    return (1.0 - luminance) / (1.0 - fill)


def _bar(coverage: np.ndarray, dot: tuple[float, float]) -> float:
    x, y = int(dot[0]), int(dot[1])
    lengths = []
    for col in range(x - BAR_COLUMNS, x + BAR_COLUMNS + 1):
        column = coverage[:, col]
        row = y - 6
        while row > 0 and not 0.5 <= column[row] <= 1.05:
            row -= 1  # past the gap and the axis to the bar
        low = row
        while low + 1 < y - 4 and 0.002 < column[low + 1] <= 1.05:
            low += 1  # a floating bar's anti-aliased bottom
        high = row
        while high > 0 and 0.002 < column[high - 1] <= 1.05:
            high -= 1
        lengths.append(float(column[high:low + 1].sum()))
    return float(np.median(lengths))


def _blob(coverage: np.ndarray, dot: tuple[float, float]) -> float:
    labels, _ = ndimage.label(coverage > 0.002)
    own = labels[int(dot[1]), int(dot[0])]
    return float(np.clip(coverage[labels == own], 0.0, 1.0).sum())


def _square(luminance: np.ndarray, dot: tuple[float, float]) -> float:
    labels, _ = ndimage.label(luminance < 0.999)
    x, row = int(dot[0]), int(dot[1]) - 6
    while row > 0 and labels[row, x] == 0:
        row -= 1
    inside = ndimage.binary_erosion(labels == labels[row, x], iterations=3)
    return darkness_of_luminance(float(luminance[inside].mean()))


def _slices(coverage: np.ndarray, dots: list[tuple[float, float]]
            ) -> tuple[float, float] | None:
    filled = np.clip(coverage, 0.0, 1.0)
    cx, cy, radius = _rim(filled)
    edges = _separators(filled, cx, cy, 0.55 * radius)
    if len(edges) < 2:
        return None
    out = []
    for x, y in dots:
        angle = math.degrees(math.atan2(cy - y, x - cx)) % 360
        after = [e for e in edges if e > angle]
        before = [e for e in edges if e <= angle]
        start = before[-1] if before else edges[-1] - 360
        end = after[0] if after else edges[0] + 360
        out.append(end - start)
    return out[0], out[1]


def _sample(image: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Bilinear values at points in pixel units (a pixel's centre at col + 0.5)."""
    return ndimage.map_coordinates(image, [ys - 0.5, xs - 0.5], order=1, mode="nearest")


def _rim(filled: np.ndarray) -> tuple[float, float, float]:
    """The pie's centre and radius: where rays from a first guess cross half the fill,
    fitted with a circle by least squares (Kasa), twice, the second time without the points
    off the first circle by more than half a pixel."""
    rows, cols = np.indices(filled.shape)
    total = filled.sum()
    cx, cy = (filled * (cols + 0.5)).sum() / total, (filled * (rows + 0.5)).sum() / total
    guess = math.sqrt(total / math.pi)
    angles = np.radians(np.arange(0.0, 360.0, 1.0))
    steps = np.arange(0.8 * guess, 1.2 * guess, 0.1)
    xs = cx + np.cos(angles)[:, None] * steps[None, :]
    ys = cy - np.sin(angles)[:, None] * steps[None, :]
    profile = _sample(filled, xs.ravel(), ys.ravel()).reshape(xs.shape)
    points = []
    for i in range(len(angles)):
        p = profile[i]
        if p[:10].min() < 0.98:
            continue  # a separator runs along this ray
        outside = np.nonzero(p < 0.5)[0]
        if not outside.size:
            continue
        j = outside[0]
        r = steps[j - 1] + (p[j - 1] - 0.5) / (p[j - 1] - p[j]) * (steps[j] - steps[j - 1])
        points.append((cx + math.cos(angles[i]) * r, cy - math.sin(angles[i]) * r))
    found = np.array(points)
    for _ in range(2):
        x, y = found[:, 0], found[:, 1]
        a = np.column_stack([x, y, np.ones_like(x)])
        b, c, d = np.linalg.lstsq(a, x * x + y * y, rcond=None)[0]
        cx, cy = b / 2, c / 2
        radius = math.sqrt(d + cx * cx + cy * cy)
        keep = np.abs(np.hypot(x - cx, y - cy) - radius) < 0.5
        found = found[keep]
    return float(cx), float(cy), float(radius)


def _separators(filled: np.ndarray, cx: float, cy: float, radius: float) -> list[float]:
    """The angles (degrees, counterclockwise from the right) of the white lines crossing
    a circle of `radius`: the centroid of the light along each dip."""
    step = 0.02
    angles = np.arange(0.0, 360.0, step)
    theta = np.radians(angles)
    light = 1.0 - _sample(filled, cx + radius * np.cos(theta), cy - radius * np.sin(theta))
    light = np.where(light > 0.05, light, 0.0)
    if not light.any():
        return []
    start = int(np.argmin(light))  # begin inside a slice, so no dip wraps around
    light, angles = np.roll(light, -start), np.roll(angles, -start)
    angles = np.where(np.arange(angles.size) < angles.size - start, angles, angles + 360)
    labels, count = ndimage.label(light > 0)
    edges = [float((light[labels == k] * angles[labels == k]).sum() /
                   light[labels == k].sum()) % 360 for k in range(1, count + 1)]
    return sorted(edges)
