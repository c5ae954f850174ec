"""The Ponzo figure: two horizontal lines, one above the other, between two long rails. In
the illusion the rails converge towards the standard (which lengthens it for people, as the
line nearer the vanishing point); in the control they are parallel, as far apart as the
converging rails are halfway between the two lines. The figure is turned upside down when
the standard is the lower line, so the rails always converge towards the standard."""

from __future__ import annotations

import math

import numpy as np

from visioneval.benchmarks.illusions.figure import (
    INK,
    SIZE,
    THICKNESS,
    Illusion,
    Picture,
    canvas,
    comparison_size,
    levels,
    sides,
)

LINE = 100.0  # px, the standard
APART = 140.0  # px between the two lines
CLEARANCE = 14.0  # px from the standard's ends to the converging rails
RAIL_ANGLE = 20.0  # degrees each converging rail leans from the vertical
BEYOND = 60.0  # px the rails run past each line
JITTER = 16.0  # the figure moves within ± this, px, both ways
SHIFT = 4.0  # each line's centre moves sideways within ± this, px, on its own
LEVELS = levels(6.0, 9)  # -24 to +24 %
QUESTION = ("The image shows two horizontal lines, one above the other, between two long "
            "lines at the sides. Which horizontal line is longer: top or bottom? Answer "
            "with one word.\nOptions: top, bottom.")


def draw(level: float, control: bool, rng: np.random.Generator) -> Picture:
    standard_side, comparison_side = sides(("top", "bottom"), rng)
    cx = SIZE / 2 + rng.uniform(-JITTER, JITTER)
    cy = SIZE / 2 + rng.uniform(-JITTER, JITTER)
    towards = -1.0 if standard_side == "top" else 1.0  # the standard's way from the middle
    rows = {standard_side: cy + towards * APART / 2, comparison_side: cy - towards * APART / 2}
    standard_x = cx + rng.uniform(-SHIFT, SHIFT)
    comparison_x = cx + rng.uniform(-SHIFT, SHIFT)
    comparison = comparison_size(LINE, level)
    converging = math.tan(math.radians(RAIL_ANGLE))
    middle = LINE / 2 + CLEARANCE + converging * APART / 2  # the rails' half-width halfway
    lean = 0.0 if control else converging

    def half_width(y: float) -> float:
        """The rails' half-width at row y: narrower towards the standard."""
        return middle + lean * towards * (cy - y)

    near = cy + towards * (APART / 2 + BEYOND)
    far = cy - towards * (APART / 2 + BEYOND)
    picture = canvas()
    for side in (-1.0, 1.0):
        picture.line((cx + side * half_width(near), near), (cx + side * half_width(far), far),
                     THICKNESS, INK)
    for x, y, length in ((standard_x, rows[standard_side], LINE),
                         (comparison_x, rows[comparison_side], comparison)):
        picture.line((x - length / 2, y), (x + length / 2, y), THICKNESS, INK)
    return Picture(picture, {
        "illusion": "ponzo", "inducers": "parallel rails" if control else "converging rails",
        "standard_side": standard_side, "comparison_side": comparison_side,
        "standard_length": LINE, "comparison_length": comparison,
        "standard_x": standard_x, "standard_y": rows[standard_side],
        "comparison_x": comparison_x, "comparison_y": rows[comparison_side],
        "rail_angle": 0.0 if control else RAIL_ANGLE,
        "rail_half_width_at_standard": half_width(rows[standard_side]),
        "rail_half_width_at_comparison": half_width(rows[comparison_side]),
        "thickness": THICKNESS, "standard_length_of_width": LINE / SIZE,
        "comparison_length_of_width": comparison / SIZE}, standard_side)


ILLUSION = Illusion(
    name="ponzo", title="Ponzo", levels=LEVELS, options=("top", "bottom"),
    question=QUESTION, standard_px=LINE,
    shows=(f"standard: a {LINE:g} px line near where the rails converge ({RAIL_ANGLE:g}° "
           "each); comparison: a line where they are wider apart"),
    control_shows="parallel rails", draw=draw)
