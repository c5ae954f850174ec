"""A grey canvas in linear light that shapes are drawn on with sub-pixel geometry.

Coordinates are pixels of the written PNG, x to the right and y down; pixel (col, row)
covers [col, col + 1) x [row, row + 1), so its centre is (col + 0.5, row + 0.5) and a line at
x = 10.25 straddles pixels 9 and 10. Each shape is a signed distance (negative inside); a
pixel's coverage is the mean over k x k sub-samples, each covering the share of its own
1/k-wide box that lies inside (exact for an edge parallel to the axes, close otherwise), and
the shape is mixed with what is under it in linear light: L = L_under (1 - c) + L_shape c.
So a half-covered pixel holds half the luminance step, not half the code step, and an edge
moved by 0.1 px moves the centroid of light by 0.1 px. Two shapes whose edges share a pixel
mix by their coverages (Porter & Duff's "over"), not by the exact area of their union; circles
drawn together (`discs`) are one shape, whose sub-samples add the circles' shares."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from visioneval.io.pngtext import text_info
from visioneval.stimuli.srgb import to_codes

Distance = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]
"""Signed distance in pixels from points (x, y) to a shape's edge, negative inside. It may
be smaller than the true distance away from the edge but never larger (1-Lipschitz)."""

SUPERSAMPLE = 8
"""Sub-samples per pixel side. With area sub-samples an edge's position survives at every
factor; 8 puts a vertical Vernier pair within 0.0004 px before encoding, at about the cost
of 4 (measure/render_subpixel.py, docs/stimuli.md)."""

_DECIDED = 0.75
"""A pixel whose centre is this far from an edge lies wholly on one side of it (a pixel's
corner is 0.71 px from its centre), so only the pixels along edges are supersampled."""


class Canvas:
    """A width x height image of linear luminance (0 black to 1 white) on a uniform
    background; draw on it, then take its 8-bit codes or a PNG."""

    def __init__(self, width: int, height: int, background: float,
                 supersample: int = SUPERSAMPLE) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"the canvas is {width} x {height} px; both need at least 1")
        if supersample < 1:
            raise ValueError(f"supersample is {supersample}; it needs at least 1")
        self.width, self.height = width, height
        self.background = _checked(background, "background")
        self.supersample = supersample
        self.luminance = np.full((height, width), self.background)

    def line(self, start: tuple[float, float], end: tuple[float, float], thickness: float,
             luminance: float) -> None:
        """A straight segment with butt ends: the rectangle `thickness` wide whose middle
        runs from `start` to `end` (Vernier segments, Müller-Lyer shafts and fins)."""
        (x0, y0), (x1, y1) = start, end
        length = math.hypot(x1 - x0, y1 - y0)
        if length == 0 or thickness <= 0:
            raise ValueError("a line needs two different ends and a thickness above 0")
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2

        def distance(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
            along = np.abs((x - mx) * ux + (y - my) * uy) - length / 2
            across = np.abs((x - mx) * uy - (y - my) * ux) - thickness / 2
            return np.maximum(along, across)

        reach = thickness / 2
        self._draw(distance, (min(x0, x1) - reach, min(y0, y1) - reach,
                              max(x0, x1) + reach, max(y0, y1) + reach), luminance)

    def disc(self, centre: tuple[float, float], radius: float, luminance: float) -> None:
        """A filled circle (numerosity dots, Ebbinghaus inducers)."""
        cx, cy = centre

        def distance(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.hypot(x - cx, y - cy) - radius

        self._draw(distance, (cx - radius, cy - radius, cx + radius, cy + radius), luminance)

    def discs(self, centres: Sequence[tuple[float, float]], radius: float,
              luminance: float) -> None:
        """Equal filled circles drawn as one shape (touching circles): each sub-sample takes
        the sum of the circles' shares, exact for circles that do not overlap, so two that
        touch let no light through where they meet and a gap of 0.1 px lets 0.1 px through;
        two `disc`s mixed one over the other would let light through where they touch."""
        if not centres or radius <= 0:
            raise ValueError("discs need at least one centre and a radius above 0")

        def circle(cx: float, cy: float) -> Distance:
            return lambda x, y: np.hypot(x - cx, y - cy) - radius

        xs, ys = [c[0] for c in centres], [c[1] for c in centres]
        self._draw([circle(cx, cy) for cx, cy in centres],
                   (min(xs) - radius, min(ys) - radius, max(xs) + radius, max(ys) + radius),
                   luminance)

    def ring(self, centre: tuple[float, float], radius: float, thickness: float,
             luminance: float) -> None:
        """A circle's outline `thickness` wide, centred on `radius` (outlined dots, cues)."""
        cx, cy = centre

        def distance(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.abs(np.hypot(x - cx, y - cy) - radius) - thickness / 2

        outer = radius + thickness / 2
        self._draw(distance, (cx - outer, cy - outer, cx + outer, cy + outer), luminance)

    def polygon(self, vertices: Sequence[tuple[float, float]], luminance: float) -> None:
        """A filled polygon, convex or not, by the even-odd rule (rectangles, arrowheads)."""
        points = np.asarray(vertices, dtype=np.float64)
        if points.ndim != 2 or points.shape[0] < 3 or points.shape[1] != 2:
            raise ValueError("a polygon needs at least three (x, y) vertices")
        ax, ay = points[:, 0], points[:, 1]
        bx, by = np.roll(ax, -1), np.roll(ay, -1)

        def distance(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
            px, py = x[..., None], y[..., None]
            ex, ey = bx - ax, by - ay
            t = np.clip(((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey), 0, 1)
            nearest = np.hypot(px - ax - t * ex, py - ay - t * ey).min(axis=-1)
            crosses = ((ay > py) != (by > py)) & (
                px < ax + (py - ay) * ex / np.where(ey == 0, 1, ey))
            inside = crosses.sum(axis=-1) % 2 == 1
            return np.where(inside, -nearest, nearest)

        self._draw(distance, (ax.min(), ay.min(), ax.max(), ay.max()), luminance)

    def _draw(self, distance: Distance | Sequence[Distance],
              box: tuple[float, float, float, float], luminance: float) -> None:
        """Mix a shape into the pixels its bounding `box` (x0, y0, x1, y1) touches; several
        distances are one shape whose parts do not overlap (`discs`)."""
        lum = _checked(luminance, "luminance")
        col0, row0 = max(math.floor(box[0]) - 1, 0), max(math.floor(box[1]) - 1, 0)
        col1 = min(math.ceil(box[2]) + 1, self.width)
        row1 = min(math.ceil(box[3]) + 1, self.height)
        if col0 >= col1 or row0 >= row1:
            return
        rows, cols = np.mgrid[row0:row1, col0:col1]
        parts = (distance,) if callable(distance) else tuple(distance)
        coverage = self._coverage(parts, cols + 0.5, rows + 0.5)
        region = self.luminance[row0:row1, col0:col1]
        region += (lum - region) * coverage

    def _coverage(self, parts: Sequence[Distance], x: NDArray[np.float64],
                  y: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each pixel's share inside the shape: decided from its centre where the edge is
        far, else the mean of its sub-samples' shares (a sub-sample's share of several parts
        is the sum of theirs)."""
        at_centre = np.min([part(x, y) for part in parts], axis=0)
        coverage = (at_centre < 0).astype(np.float64)
        edge = np.abs(at_centre) < _DECIDED
        if edge.any():
            k = self.supersample
            offsets = (np.arange(k) + 0.5) / k - 0.5
            sx = x[edge][:, None, None] + offsets[None, None, :]
            sy = y[edge][:, None, None] + offsets[None, :, None]
            shares = sum(self._share(part(sx, sy) * k) for part in parts)
            coverage[edge] = np.clip(shares, 0.0, 1.0).mean(axis=(1, 2))
        return coverage

    def _share(self, distance: NDArray[np.float64]) -> NDArray[np.float64]:
        """The share of a sub-sample's box inside a straight edge `distance` sub-samples
        from its centre: a point sample (in or out) would put an edge only to the nearest
        1/k px."""
        return np.clip(0.5 - distance, 0.0, 1.0)

    def codes(self, rng: np.random.Generator | None = None) -> NDArray[np.uint8]:
        """The image as 8-bit sRGB codes; with `rng`, dithered (`srgb.to_codes`)."""
        return to_codes(self.luminance, rng)

    def to_png(self, params: dict[str, Any], rng: np.random.Generator | None = None) -> bytes:
        """A greyscale 8-bit PNG whose `visioneval` text chunk holds `params` and how the
        image was rendered (supersampling, dithering), so the image describes itself."""
        if "rendering" in params:
            raise ValueError("'rendering' is written by the canvas; name the parameter "
                             "otherwise")
        rendering = {"supersample": self.supersample, "mixing": "linear light",
                     "encoding": "sRGB 8-bit", "dithered": rng is not None}
        return png_bytes(self.codes(rng), {**params, "rendering": rendering})


def png_bytes(codes: NDArray[np.uint8], params: dict[str, Any], compress_level: int = 6
              ) -> bytes:
    """Greyscale codes as PNG bytes with `params` as JSON in the `visioneval` text chunk.
    `compress_level` is zlib's (0-9): an image dithered all over is noise to zlib, and at 1
    it is written about four times as fast for a file about a fifth larger."""
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(codes, dtype=np.uint8)).save(
        out, format="PNG", pnginfo=text_info(json.dumps(params, sort_keys=True)),
        compress_level=compress_level)
    return out.getvalue()


def _checked(luminance: float, what: str) -> float:
    if not 0.0 <= luminance <= 1.0:
        raise ValueError(f"{what} is {luminance}; linear luminance runs from 0 to 1 "
                         "(srgb.decode turns a code into one)")
    return float(luminance)
