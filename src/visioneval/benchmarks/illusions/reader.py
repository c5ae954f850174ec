"""The builtin `reader` for the illusions: a classical observer that measures the two lines
or circles from the pixels, so it is not fooled (its PSEs sit at 0 and its JNDs at the
smallest the levels can tell). It takes each pixel's darkness in linear light (the
background's luminance minus the pixel's) and splits the dark pixels into connected shapes.

- Lines ("top or bottom?"): the shapes wider than tall (not the rails). A plain line's
  length is its total darkness over its darkness per column (measured in its middle): the
  anti-aliased ends count by their share. A shaft with fins is measured by its fins: each
  fin's centre line, found row by row off the shaft's axis, is extended back to the axis,
  where it meets the shaft's end; the fins' own ends are never used.
- Circles ("left or right?"): on each half of the image, the shape nearest the middle of
  that half's shapes (the centre of a ring of inducers, or the lone circle); its area is its
  total darkness.

Where the two are equal to within what it can measure (a hundredth of a pixel, level 0) it
guesses, by a checksum of the image: a tie broken by its own measuring error would put
every such trial on one side and move its PSE by up to half a step."""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass

import numpy as np
from PIL import Image

from visioneval.stimuli.srgb import decode

_OPTIONS = re.compile(r"Options:\s*([^,\n]+),\s*([^.\n]+)\.")
NOISE = 0.02  # darkness below this share of the ink's does not join a shape
FIN_MARGIN = 1.5  # px beyond the shaft's half-thickness where a fin's rows start
TIP_MARGIN = 2.5  # px before a fin's far end where its rows stop (its square-cut tip)
TIE = 5e-4  # sizes this close (relative) are equal: 0.07 px of a 140 px shaft


def read(prompt: str, png: bytes) -> str:
    found = _OPTIONS.search(prompt)
    options = (found.group(1).strip(), found.group(2).strip()) if found else ("top", "bottom")
    with Image.open(io.BytesIO(png)) as image:
        luminance = decode(np.asarray(image.convert("L"), dtype=np.float64))
    dark = np.clip(float(np.median(luminance)) - luminance, 0.0, None)
    sizes = _circles(dark) if options == ("left", "right") else _lines(dark)
    if sizes is None:
        return options[0]
    first, second = sizes
    if abs(first - second) <= TIE * max(first, second):
        return options[zlib.crc32(png) % 2]
    return options[0] if first > second else options[1]


@dataclass(frozen=True)
class Shape:
    """One connected dark shape: its darkness in its bounding box (its faint edge
    included, zero where another shape is) and where the box lies in the image."""

    dark: np.ndarray
    top: int
    left: int

    def centre(self) -> tuple[float, float]:
        """The darkness-weighted centre (x, y) in the image's pixels."""
        x, y = _centroid(self.dark)
        return x + self.left, y + self.top

    def wide(self) -> bool:
        height, width = self.dark.shape
        return width > height


def _shapes(dark: np.ndarray) -> list[Shape]:
    from scipy import ndimage  # loaded with the reader

    ink = float(dark.max())
    if ink <= 0:
        return []
    labels, _ = ndimage.label(dark > NOISE * ink, structure=np.ones((3, 3)))
    out = []
    for index, box in enumerate(ndimage.find_objects(labels), 1):
        rows = slice(max(box[0].start - 1, 0), box[0].stop + 1)
        cols = slice(max(box[1].start - 1, 0), box[1].stop + 1)
        within = ndimage.binary_dilation(labels[rows, cols] == index, structure=np.ones((3, 3)))
        out.append(Shape(np.where(within, dark[rows, cols], 0.0), rows.start, cols.start))
    return out


def _centroid(dark: np.ndarray) -> tuple[float, float]:
    total = dark.sum()
    x = np.arange(dark.shape[1]) + 0.5
    y = np.arange(dark.shape[0]) + 0.5
    return float(dark.sum(axis=0) @ x / total), float(dark.sum(axis=1) @ y / total)


def _circles(dark: np.ndarray) -> tuple[float, float] | None:
    """The left and the right central circle's areas (in darkness)."""
    middle = dark.shape[1] / 2
    halves: dict[bool, list[tuple[tuple[float, float], float]]] = {True: [], False: []}
    for shape in _shapes(dark):
        centre = shape.centre()
        halves[centre[0] < middle].append((centre, float(shape.dark.sum())))
    if not halves[True] or not halves[False]:
        return None
    areas = []
    for left in (True, False):
        found = halves[left]
        mx = sum(c[0] for c, _ in found) / len(found)
        my = sum(c[1] for c, _ in found) / len(found)
        areas.append(min(found, key=lambda f: (f[0][0] - mx) ** 2 + (f[0][1] - my) ** 2)[1])
    return areas[0], areas[1]


def _lines(dark: np.ndarray) -> tuple[float, float] | None:
    """The top and the bottom line's lengths in px (the two widest-lying shapes)."""
    lines = sorted((s for s in _shapes(dark) if s.wide()), key=lambda s: float(s.dark.sum()),
                   reverse=True)[:2]
    if len(lines) < 2:
        return None
    top, bottom = sorted(lines, key=lambda s: s.centre()[1])
    return _length(top.dark), _length(bottom.dark)


def _length(shape: np.ndarray) -> float:
    """A horizontal line's length: by its darkness when plain, by its fins when it has."""
    cols = np.flatnonzero(shape.sum(axis=0))
    middle = (cols[0] + cols[-1] + 1) / 2
    columns = shape.sum(axis=0)
    inner = columns[int(middle - 0.1 * len(cols)):int(middle + 0.1 * len(cols)) + 1]
    per_column = float(np.median(inner))
    axis = _centroid(shape)[1]
    thickness = per_column / float(shape.max())
    offset = np.abs(np.arange(shape.shape[0]) + 0.5 - axis)
    off_axis = offset >= thickness / 2 + FIN_MARGIN
    if shape[off_axis].sum() < NOISE * shape.sum():
        return float(shape.sum()) / per_column
    return _finned(shape, axis, offset, off_axis, middle) or float(shape.sum()) / per_column


def _finned(shape: np.ndarray, axis: float, offset: np.ndarray, off_axis: np.ndarray,
            middle: float) -> float | None:
    """The distance between the two points where the fins' centre lines meet the axis."""
    reach = float(offset[shape.sum(axis=1) > 0].max())
    rows = np.flatnonzero(off_axis & (offset <= reach - TIP_MARGIN))
    x = np.arange(shape.shape[1]) + 0.5
    ends = []
    for side in (x < middle, x >= middle):
        heights, places = [], []
        for row in rows:
            weights = shape[row] * side
            if weights.sum() > 0:
                heights.append(offset[row])
                places.append(float((weights * x).sum() / weights.sum()))
        if len(heights) < 3:
            return None
        ends.append(float(np.polyfit(heights, places, 1)[1]))
    return ends[1] - ends[0]
