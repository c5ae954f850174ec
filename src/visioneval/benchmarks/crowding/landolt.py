"""The Landolt C in the proportions of the standard optotype (ISO 8596): a ring whose outer
diameter is five stroke widths, with a gap one stroke wide cut through it. Drawn as the ring
and then a background-coloured rectangle from the centre outward through the ring, both
anti-aliased in linear light (`stimuli.canvas`), so a small C's gap keeps its width in
light, not rounded to whole pixels. Each C is drawn on a canvas of its own and laid onto
the image darkest-wins, so the cut of one C never reaches into a neighbour that touches it
(at a spacing of one diameter)."""

from __future__ import annotations

import math

import numpy as np

from visioneval.stimuli.canvas import Canvas

DIRECTIONS = ("up", "right", "down", "left")
_STEP = {"up": (0.0, -1.0), "right": (1.0, 0.0), "down": (0.0, 1.0), "left": (-1.0, 0.0)}
STROKE_SHARE = 0.2  # stroke width and gap width, as a share of the outer diameter
_MARGIN = 2  # px around a C's own canvas: its anti-aliased edge and the cut's overshoot


def stroke(diameter: float) -> float:
    return diameter * STROKE_SHARE


def draw_c(canvas: Canvas, centre: tuple[float, float], diameter: float, gap: str,
           ink: float, background: float) -> None:
    """A Landolt C of outer `diameter` px at `centre`, its gap facing `gap` (one of
    DIRECTIONS; y grows downward, so "up" is toward the top of the image), in `ink`
    darker than the canvas's `background`."""
    cx, cy = centre
    x0, y0 = math.floor(cx - diameter / 2) - _MARGIN, math.floor(cy - diameter / 2) - _MARGIN
    side = math.ceil(diameter) + 2 * _MARGIN + 1
    own = Canvas(side, side, background, canvas.supersample)
    lx, ly = cx - x0, cy - y0  # the centre on the C's own canvas, its fraction kept
    width = stroke(diameter)
    own.ring((lx, ly), (diameter - width) / 2, width, ink)
    dx, dy = _STEP[gap]
    across_x, across_y = -dy * width / 2, dx * width / 2  # half the gap, across it
    reach = diameter / 2 + 1.0  # past the outer edge, so the cut is clean
    far_x, far_y = lx + dx * reach, ly + dy * reach
    own.polygon([(lx + across_x, ly + across_y), (far_x + across_x, far_y + across_y),
                 (far_x - across_x, far_y - across_y), (lx - across_x, ly - across_y)],
                background)
    top, left = max(y0, 0), max(x0, 0)
    bottom, right = min(y0 + side, canvas.height), min(x0 + side, canvas.width)
    if top >= bottom or left >= right:
        return
    region = canvas.luminance[top:bottom, left:right]
    np.minimum(region, own.luminance[top - y0:bottom - y0, left - x0:right - x0], out=region)
