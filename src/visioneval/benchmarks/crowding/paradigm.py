"""The crowding stimulus and question. A black Landolt C on white at the image's centre, its
gap up, right, down or left (balanced over each level's trials), with four Landolt Cs of
the same size above, right of, below and left of it at the centre-to-centre spacing the
level gives in target diameters, each flanker's gap drawn at random from the same four
directions, independently of the target's.

Why Cs as flankers and not full rings: with rings the target would be the only shape with
a gap, and "where is the gap?" could be answered by finding any gap in the image, without
singling out the middle object; with Cs of random gaps a model must take the middle one's,
and reporting a flanker's gap instead (crowding's substitution errors) is right only by
chance, so proportion correct falls to the guess rate 1/4 and no lower.

The spacing runs from 1 diameter (the Cs touch but never overlap: crowding, not masking by
overlap) to 5, log-spaced, at two target sizes; the target alone is the control
that shows the target itself is legible (docs/crowding.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from visioneval.benchmarks.crowding.landolt import DIRECTIONS, draw_c, stroke
from visioneval.benchmarks.crowding.summaries import summaries
from visioneval.paradigms.paradigm import (
    Condition,
    Drawn,
    HumanValue,
    Paradigm,
    Reader,
    Scale,
    Summary,
)
from visioneval.paradigms.trial import Trial
from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.srgb import decode

SIZE = 768  # px, square
DIAMETERS = {"flanked": 64.0, "flanked-small": 32.0}  # each flanked curve's target, px
UNFLANKED = "unflanked"
# centre to centre, in target diameters: ISO 3's R10 preferred numbers from 1 (the rings
# touch) to 5, steps of 10^0.1 (about 1.26), as acuity charts step their sizes
SPACINGS = (1.0, 1.25, 1.6, 2.0, 2.5, 3.15, 4.0, 5.0)
TRIALS = 18  # per level: 8 spacings x 18 = 144 trials a curve; the target alone 2 x 18
BACKGROUND = float(decode(255))
INK = float(decode(0))
UNIT = "target diameters"
OPTIONS = ("up", "down", "left", "right")  # as the question lists them
QUESTION = ("Look at the ring in the middle of the image. It has a gap, like the letter C. "
            "Where is the gap: up, down, left or right? Answer with one word.\n"
            "Options: up, down, left, right.")


class Crowding(Paradigm):
    name = "crowding"
    title = "Crowding (critical spacing)"
    summary = ("Crowding: the centre-to-centre spacing at which four flanking Landolt Cs stop "
               "a model from reading the middle C's gap (critical spacing in target "
               "diameters, px and shares of the image), with the target alone as a control.")
    kind = "choice"
    unit = UNIT
    criterion = 0.625  # halfway between the guess rate 1/4 and perfect
    alternatives = 4
    human = (
        HumanValue(
            "Bouma's law (periphery)",
            "critical spacing ≈ 0.5 × eccentricity, centre to centre",
            "Bouma 1970, Nature 226:177; Pelli & Tillman 2008, Nat Neurosci 11:1129",
            "letters in peripheral vision, gaze held on a fixation mark",
            "needs an eccentricity, and a model viewing a whole image has no fixation, so no "
            "pixel figure compares; its form does: at one eccentricity people's critical "
            "spacing does not grow with the target's size (Pelli & Tillman 2008; Tripathy "
            "& Cavanagh 2002, Vision Res 42:2357), a size exponent near 0"),
        HumanValue(
            "standardized Bouma factor b'",
            "0.24 (50 observers), 0.35 (Bouma 1970), 0.30 (mean of five studies)",
            "Kurzawski et al. 2023, J Vis 23(8):6",
            "radial flankers on the right meridian at 5 and 10 deg, gaze tracked; b' "
            "corrected to Bouma's 25 alternatives and 75% criterion",
            "a slope against eccentricity in degrees: not comparable with a model's figure "
            "in pixels or target diameters"),
        HumanValue(
            "foveal critical spacing, four flankers",
            "4.4 bar widths edge to edge: about 1.9 target sizes centre to centre",
            "Coates, Chin & Chung 2013, Optom Vis Sci 90(7):628",
            "tumbling E (5 bar widths tall) among four Es, 4 orientations, fovea, letters "
            "near the acuity limit, 150 ms",
            "in target sizes, as the model's critical spacing in target diameters (a Landolt "
            "C is also 5 strokes across); people's targets were near their acuity limit, "
            "these are well above a model's (the unflanked control)"),
        HumanValue(
            "foveal crowding zone, adaptive optics",
            "0.75-1.3 arcmin edge to edge",
            "Coates, Levi, Touch & Sabesan 2018, Sci Rep 8:9177",
            "letters near the acuity limit, optical blur removed, fovea",
            "an angle needs a viewing distance, which an image given to a model has not: "
            "compare in target sizes instead"),
    )

    def conditions(self) -> tuple[Condition, ...]:
        flanked = tuple(
            Condition(name, SPACINGS, TRIALS, (
                Scale("px", diameter), Scale("% of image width", 100.0 * diameter / SIZE)),
                note=f"a {diameter:g} px Landolt C among four")
            for name, diameter in DIAMETERS.items())
        alone = Condition(UNFLANKED, tuple(sorted(DIAMETERS.values())), TRIALS,
                          note="the target alone; level: its outer diameter",
                          unit="px", fitted=False)
        return (*flanked, alone)

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        rng = np.random.default_rng(seed)
        alone = not condition.fitted
        diameter = level if alone else DIAMETERS[condition.name]
        centre = SIZE / 2
        gap = OPTIONS[index % len(OPTIONS)]
        canvas = Canvas(SIZE, SIZE, BACKGROUND)
        draw_c(canvas, (centre, centre), diameter, gap, INK, BACKGROUND)
        geometry: dict[str, float | int | str | bool] = {
            "centre_x": centre, "centre_y": centre, "diameter": diameter,
            "stroke": stroke(diameter), "gap_width": stroke(diameter), "gap": gap,
            "diameter_share_of_width": diameter / SIZE, "flankers": 0 if alone else 4}
        if not alone:
            spacing = level * diameter
            for side, (dx, dy) in zip(DIRECTIONS, ((0, -1), (1, 0), (0, 1), (-1, 0)),
                                      strict=True):
                facing = str(rng.choice(DIRECTIONS))
                draw_c(canvas, (centre + dx * spacing, centre + dy * spacing), diameter,
                       facing, INK, BACKGROUND)
                geometry[f"flanker_{side}_gap"] = facing
            geometry.update({"spacing_px": spacing, "spacing_diameters": level,
                             "edge_to_edge_px": spacing - diameter,
                             "spacing_share_of_width": spacing / SIZE})
        trial = Trial(paradigm=self.name, condition=condition.name, kind=self.kind,
                      level=level, unit=condition.unit or self.unit, options=OPTIONS,
                      answer=gap, seed=seed, width=SIZE, height=SIZE, stimulus=geometry)
        png = canvas.to_png(trial.model_dump(exclude={"rendering"}))
        return Drawn(png, trial, QUESTION)

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.crowding.reader import read

        return read

    def summaries(self, curves: Sequence[object]) -> list[Summary]:
        return summaries(curves, self.criterion, DIAMETERS, UNFLANKED, SIZE)
