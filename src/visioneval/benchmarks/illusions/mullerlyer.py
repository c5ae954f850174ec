"""The Müller-Lyer figure: two horizontal lines, one above the other. In the illusion the
standard's shaft ends in fins pointing outwards (arrow tails, which lengthen it for people)
and the comparison is a plain line; in the control both are plain. The fins are drawn from
the shaft's ends, so their centre lines meet at the shaft's end points: the shaft's length
is the standard's whatever the fins add to the figure's extent."""

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
from visioneval.stimuli.canvas import Canvas

SHAFT = 140.0  # px, the standard's shaft
FIN = 35.0  # px, each fin (a quarter of the shaft)
FIN_ANGLE = 30.0  # degrees between a fin and the shaft's line
APART = 140.0  # px between the two lines
JITTER = 16.0  # the pair moves within ± this, px, both ways
SHIFT = 20.0  # each line's centre moves sideways within ± this, px, on its own
LEVELS = levels(10.0, 9)  # -40 to +40 %
QUESTION = ("The image shows two horizontal lines, one above the other. Which horizontal "
            "line is longer: top or bottom? Judge the horizontal lines themselves, not any "
            "strokes at their ends. Answer with one word.\nOptions: top, bottom.")


def draw(level: float, control: bool, rng: np.random.Generator) -> Picture:
    standard_side, comparison_side = sides(("top", "bottom"), rng)
    cx = SIZE / 2 + rng.uniform(-JITTER, JITTER)
    cy = SIZE / 2 + rng.uniform(-JITTER, JITTER)
    rows = {"top": cy - APART / 2, "bottom": cy + APART / 2}
    standard_x = cx + rng.uniform(-SHIFT, SHIFT)
    comparison_x = cx + rng.uniform(-SHIFT, SHIFT)
    comparison = comparison_size(SHAFT, level)
    picture = canvas()
    _shaft(picture, standard_x, rows[standard_side], SHAFT)
    _shaft(picture, comparison_x, rows[comparison_side], comparison)
    if not control:
        _fins_out(picture, standard_x, rows[standard_side], SHAFT)
    return Picture(picture, {
        "illusion": "muller-lyer", "inducers": "none" if control else "fins out",
        "standard_side": standard_side, "comparison_side": comparison_side,
        "standard_length": SHAFT, "comparison_length": comparison,
        "standard_x": standard_x, "standard_y": rows[standard_side],
        "comparison_x": comparison_x, "comparison_y": rows[comparison_side],
        "fin_length": 0.0 if control else FIN, "fin_angle": 0.0 if control else FIN_ANGLE,
        "thickness": THICKNESS, "standard_length_of_width": SHAFT / SIZE,
        "comparison_length_of_width": comparison / SIZE}, standard_side)


def _shaft(picture: Canvas, x: float, y: float, length: float) -> None:
    picture.line((x - length / 2, y), (x + length / 2, y), THICKNESS, INK)


def _fins_out(picture: Canvas, x: float, y: float, length: float) -> None:
    """Two fins at each end, pointing away from the shaft."""
    dx = FIN * math.cos(math.radians(FIN_ANGLE))
    dy = FIN * math.sin(math.radians(FIN_ANGLE))
    for end, outward in ((x - length / 2, -1.0), (x + length / 2, 1.0)):
        for up in (-1.0, 1.0):
            picture.line((end, y), (end + outward * dx, y + up * dy), THICKNESS, INK)


ILLUSION = Illusion(
    name="muller-lyer", title="Müller-Lyer", levels=LEVELS, options=("top", "bottom"),
    question=QUESTION, standard_px=SHAFT,
    shows=(f"standard: a {SHAFT:g} px shaft with fins out ({FIN:g} px at {FIN_ANGLE:g}°); "
           "comparison: a plain line"),
    control_shows="both lines plain", draw=draw)
