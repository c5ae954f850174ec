"""The Landolt C in the proportions of the standard optotype (ISO 8596): a ring whose outer
diameter is five stroke widths, with a gap one stroke wide cut through it. Drawn as the ring
and then a background-coloured rectangle from the centre outward through the ring, both
anti-aliased in linear light (`stimuli.canvas`), so a small C's gap keeps its width in
light, not rounded to whole pixels."""

from __future__ import annotations

from visioneval.stimuli.canvas import Canvas

DIRECTIONS = ("up", "right", "down", "left")
_STEP = {"up": (0.0, -1.0), "right": (1.0, 0.0), "down": (0.0, 1.0), "left": (-1.0, 0.0)}
STROKE_SHARE = 0.2  # stroke width and gap width, as a share of the outer diameter


def stroke(diameter: float) -> float:
    return diameter * STROKE_SHARE


def draw_c(canvas: Canvas, centre: tuple[float, float], diameter: float, gap: str,
           ink: float, background: float) -> None:
    """A Landolt C of outer `diameter` px at `centre`, its gap facing `gap` (one of
    DIRECTIONS; y grows downward, so "up" is toward the top of the image)."""
    width = stroke(diameter)
    canvas.ring(centre, (diameter - width) / 2, width, ink)
    dx, dy = _STEP[gap]
    cx, cy = centre
    across_x, across_y = -dy * width / 2, dx * width / 2  # half the gap, across it
    reach = diameter / 2 + 1.0  # past the outer edge, so the cut is clean
    far_x, far_y = cx + dx * reach, cy + dy * reach
    canvas.polygon([(cx + across_x, cy + across_y), (far_x + across_x, far_y + across_y),
                    (far_x - across_x, far_y - across_y), (cx - across_x, cy - across_y)],
                   background)
