"""The Ebbinghaus (Titchener) figure: a circle on the left and one on the right. In the
illusion the standard sits inside a ring of five larger circles (which shrink it for people)
and the comparison stands alone; in the control both stand alone. Sizes are diameters."""

from __future__ import annotations

import math

import numpy as np

from visioneval.benchmarks.illusions.figure import (
    INK,
    SIZE,
    Illusion,
    Picture,
    canvas,
    comparison_size,
    levels,
    sides,
)

TARGET = 44.0  # px, the standard's diameter
INDUCER = 66.0  # px, each inducer's diameter (1.5 x the standard's)
INDUCERS = 5  # 10 px apart from each other at this size and gap
GAP = 10.0  # px between the standard's edge and each inducer's
SHIFT = (8.0, 16.0)  # each circle's centre moves within ± these, px (across, down)
LEVELS = levels(6.0, 9)  # -24 to +24 %
QUESTION = ("The image shows a circle on the left and a circle on the right; either may be "
            "surrounded by a ring of other circles. Which of the two central circles is "
            "larger: left or right? Answer with one word.\nOptions: left, right.")


def draw(level: float, control: bool, rng: np.random.Generator) -> Picture:
    standard_side, comparison_side = sides(("left", "right"), rng)
    columns = {"left": SIZE / 4, "right": 3 * SIZE / 4}
    centres = {side: (columns[side] + rng.uniform(-SHIFT[0], SHIFT[0]),
                      SIZE / 2 + rng.uniform(-SHIFT[1], SHIFT[1])) for side in columns}
    turn = rng.uniform(0.0, 2 * math.pi / INDUCERS)
    comparison = comparison_size(TARGET, level)
    picture = canvas()
    sx, sy = centres[standard_side]
    picture.disc((sx, sy), TARGET / 2, INK)
    picture.disc(centres[comparison_side], comparison / 2, INK)
    reach = TARGET / 2 + GAP + INDUCER / 2
    if not control:
        for i in range(INDUCERS):
            angle = turn + 2 * math.pi * i / INDUCERS
            picture.disc((sx + reach * math.cos(angle), sy + reach * math.sin(angle)),
                         INDUCER / 2, INK)
    cx, cy = centres[comparison_side]
    return Picture(picture, {
        "illusion": "ebbinghaus", "inducers": 0 if control else INDUCERS,
        "standard_side": standard_side, "comparison_side": comparison_side,
        "standard_diameter": TARGET, "comparison_diameter": comparison,
        "standard_x": sx, "standard_y": sy, "comparison_x": cx, "comparison_y": cy,
        "inducer_diameter": 0.0 if control else INDUCER, "inducer_gap": 0.0 if control else GAP,
        "standard_diameter_of_width": TARGET / SIZE,
        "comparison_diameter_of_width": comparison / SIZE}, standard_side)


ILLUSION = Illusion(
    name="ebbinghaus", title="Ebbinghaus", levels=LEVELS, options=("left", "right"),
    question=QUESTION, standard_px=TARGET,
    shows=(f"standard: a {TARGET:g} px circle in a ring of {INDUCERS} circles of {INDUCER:g} "
           f"px, {GAP:g} px away; comparison: a circle alone"),
    control_shows="both circles alone", draw=draw)
