"""The Vernier stimulus and question. Two dark vertical segments on mid-grey, one above the
other with a gap, the lower one shifted horizontally by the signed offset (positive: to the
right); the pair's position jitters so that no edge of the image is a reference. Drawn
anti-aliased in linear light (`stimuli.canvas`), so an offset of 0.25 px moves the lower
segment's light by 0.25 px; fixed 8-bit codes, no dithering (the edges carry the offset).

The comparison is P("right") against the signed offset: its 50% point is the observer's
bias, its JND (0.674σ) the Vernier threshold (docs/vernier.md)."""

from __future__ import annotations

import numpy as np

from visioneval.paradigms.paradigm import Condition, Drawn, HumanValue, Paradigm, Reader, Scale
from visioneval.paradigms.trial import Trial
from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.srgb import decode

SIZE = 256  # px, square
LENGTH = 60.0  # each segment, px
THICKNESS = 2.0
GAP = 8.0  # between the upper segment's end and the lower one's start
JITTER = 24.0  # the pair's centre moves within ± this, px, both ways
BACKGROUND = float(decode(128))  # mid-grey code 128
INK = float(decode(24))
OFFSETS = (-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0)  # px, signed
TRIALS = 18  # 8 levels x 18 = 144 trials per curve
QUESTION = ("The image shows two short vertical lines, one above the other. Is the lower "
            "line shifted to the left or to the right of the upper line? Answer with one "
            "word.\nOptions: left, right.")


class Vernier(Paradigm):
    name = "vernier"
    title = "Vernier acuity"
    summary = ("Vernier acuity: the offset between two line segments a model needs to tell "
               "left from right (PSE and JND in pixels and segment lengths), on rendered, "
               "self-describing stimuli.")
    kind = "comparison"
    unit = "px"
    counted = "answered 'right'"
    human = (
        HumanValue(
            "Vernier threshold", "about 3 arcsec at best; a few arcsec to ~10 typically",
            "Wolfe et al., Sensation & Perception, Essay 3.1 (Westheimer's hyperacuity)",
            "foveal, high contrast, trained observers, long lines, a viewing distance",
            "pixels need a viewing distance: at 57 cm and 0.25 mm pixels 1 px is about 90 "
            "arcsec, so 3-10 arcsec is 0.03-0.11 px; compare the JND as a share of the "
            "segment's length (about 1% for 6 arcsec on a 10 arcmin line), or measure people "
            "on these very images (`--backend human`, docs/human.md)"),)

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("vertical", OFFSETS, TRIALS, (
            Scale("% of segment length", 100.0 / LENGTH),
            Scale("% of image width", 100.0 / SIZE))),)

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        rng = np.random.default_rng(seed)
        cx = SIZE / 2 + rng.uniform(-JITTER, JITTER)
        cy = SIZE / 2 + rng.uniform(-JITTER, JITTER)
        upper_x = cx - level / 2
        lower_x = cx + level / 2
        canvas = Canvas(SIZE, SIZE, BACKGROUND)
        top = cy - GAP / 2 - LENGTH
        canvas.line((upper_x, top), (upper_x, top + LENGTH), THICKNESS, INK)
        bottom = cy + GAP / 2
        canvas.line((lower_x, bottom), (lower_x, bottom + LENGTH), THICKNESS, INK)
        answer = "right" if level > 0 else "left" if level < 0 else ""
        trial = Trial(paradigm=self.name, condition=condition.name, kind=self.kind,
                      level=level, unit=self.unit, options=("left", "right"), answer=answer,
                      positive="right", seed=seed, width=SIZE, height=SIZE,
                      stimulus={"upper_x": upper_x, "lower_x": lower_x, "length": LENGTH,
                                "thickness": THICKNESS, "gap": GAP, "centre_y": cy,
                                "offset_share_of_length": level / LENGTH})
        png = canvas.to_png(trial.model_dump(exclude={"rendering"}))
        return Drawn(png, trial, QUESTION)

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.vernier.reader import read

        return read
