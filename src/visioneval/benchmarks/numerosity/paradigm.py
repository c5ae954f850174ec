"""The numerosity stimulus and question. Two boxes side by side, each with an array of black
dots on white; one box has more dots than the other by the trial's ratio (larger number over
smaller, the level), from 10 to 40 dots, well above the range people count at a glance.

Number comes with other features that grow with it; the two conditions hold one of them
equal across the boxes, as the classic designs do (Pica et al. 2004; Halberda & Feigenson
2008: size-controlled and area-controlled trials):
- "equal-size": every dot in both boxes has one diameter (drawn per trial), so the box with
  more dots also has more black (total area grows with number);
- "equal-area": both boxes have the same total dot area, so the box with more dots has
  smaller dots.
A model that answers from the amount of black does well under equal size and is at chance
under equal area; one that answers from number does alike under both. In both, each box's
field (the disc its dots are scattered in) is drawn so that the convex hull does not grow
with number on average, and the side with more dots alternates trial by trial. Every trial
stores both boxes' counts, dot diameters, total dot areas, hull areas and dot centres.

The fit is the Weber fraction w of the standard model (`stats.weber_fit`, docs/numerosity.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from visioneval.benchmarks.numerosity.arrays import DotArray, scatter
from visioneval.paradigms.paradigm import Condition, Drawn, HumanValue, OwnFit, Paradigm, Reader
from visioneval.paradigms.trial import Trial
from visioneval.stats.weber_fit import fit_weber
from visioneval.stimuli.canvas import Canvas

WIDTH, HEIGHT = 640, 320
BOX = 308  # px, each box's outer side
BOX_Y = 6
BOX_X = {"left": 6, "right": WIDTH - 6 - BOX}
FRAME = 2  # px
PAGE = 1.0  # white, linear luminance
FRAME_INK = 0.45  # mid grey, far lighter than the dots: a frame never reads as a dot
INK = 0.0  # black dots
FEWEST, MOST = 10, 40  # dots in a box
DIAMETER = (7.0, 11.0)  # px: a trial's dot diameter (equal size), or the pair's mean one
HULL = (16000.0, 26000.0)  # px²: each box's expected hull area, drawn per box
JITTER = 10.0  # px: the field's centre moves within ± this of the box's centre, both ways
HULL_FALL = 2.55  # expected hull share of the field: 1 − HULL_FALL·n^(−2/3) (measured)
# Ratios as exact fractions of whole numbers: every trial's counts are multiples of them.
RATIOS = (Fraction(13, 12), Fraction(11, 10), Fraction(8, 7), Fraction(6, 5), Fraction(4, 3),
          Fraction(3, 2), Fraction(2), Fraction(5, 2), Fraction(3))
TRIALS = 16  # 9 ratios x 16 = 144 trials per curve
SIDES = ("left", "right")
QUESTION = ("The image shows two boxes of black dots, one on the left and one on the right. "
            "Which box has more dots? Answer with one word.\nOptions: left, right.")
CONDITIONS = {
    "equal-area": "both boxes have the same total dot area: the box with more dots has "
                  "smaller dots",
    "equal-size": "every dot has one diameter: the box with more dots has more black"}


class Numerosity(Paradigm):
    name = "numerosity"
    title = "Numerosity (approximate number)"
    summary = ("Numerosity: which of two dot arrays has more dots, 10 to 40 each, at ratios "
               "1.08 to 3; the Weber fraction w under equal dot size and equal total area.")
    kind = "choice"
    unit = "ratio"
    human = (
        HumanValue(
            "Weber fraction w, young adults, dot comparison",
            "from under 0.10 to over 0.60 across 68 studies; close among studies that "
            "used one generator (Panamath)",
            "Guillaume & Van Rinsveld 2018, Front. Psychol. 9:1694 (meta-analysis, "
            "2004-2017)",
            "arrays shown briefly (a fraction of a second), generators that control "
            "dot size, area and hull in different ways",
            "w is a ratio, so no viewing distance is needed; the generator is what differs: "
            "compare a model's w with people's on these same images"),
        HumanValue(
            "Weber fraction w, adults, dot comparison",
            "about 0.15 to 0.25 (the range usually quoted)",
            "the standard model of Pica et al. 2004 (Science 306:499) and Halberda & "
            "Feigenson 2008 (Dev. Psychol. 44:1457)",
            "brief displays that prevent counting",
            "the same unit as the model's w; people cannot count in a fraction of a second, "
            "a model has all the time it wants"),
        HumanValue(
            "number sense across the lifespan",
            "precision improves through school age and peaks at about 30 years; large "
            "differences between people of one age",
            "Halberda, Ly, Wilmer, Naiman & Germine 2012, PNAS 109:11116",
            "over 10,000 people aged 11 to 85 online, blue and yellow dots intermixed and "
            "flashed",
            "a spread of w, not one value: a model's w can be placed within it"),
    )

    def conditions(self) -> tuple[Condition, ...]:
        levels = tuple(float(r) for r in RATIOS)
        return tuple(Condition(name, levels, TRIALS, note=note)
                     for name, note in CONDITIONS.items())

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        rng = np.random.default_rng(seed)
        fewer, more = counts(level, rng)
        more_side = SIDES[index % 2]
        numbers = {more_side: more, _other(more_side): fewer}
        radii = _radii(condition.name, numbers, rng.uniform(*DIAMETER) / 2)
        arrays = {side: _array(rng, side, numbers[side], radii[side]) for side in SIDES}
        canvas = Canvas(WIDTH, HEIGHT, PAGE)
        for side in SIDES:
            _box(canvas, BOX_X[side])
            for centre in arrays[side].centres:
                canvas.disc(centre, arrays[side].radius, INK)
        trial = Trial(paradigm=self.name, condition=condition.name, kind=self.kind,
                      level=level, unit=self.unit, options=SIDES, answer=more_side,
                      seed=seed, width=WIDTH, height=HEIGHT,
                      stimulus=geometry(arrays, more_side))
        png = canvas.to_png(trial.model_dump(exclude={"rendering"}))
        return Drawn(png, trial, QUESTION)

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.numerosity.reader import read

        return read

    def fit(self, levels: Sequence[float], counted: Sequence[int], trials: Sequence[int],
            resamples: int, seed: int) -> OwnFit:
        found = fit_weber(levels, counted, trials, self.criterion, resamples, seed)
        return OwnFit(
            name="w", unit="", status=found.status, reason=found.reason, value=found.w,
            ci95=found.w_ci, fitted=found.fitted_w, lapse=found.lapse,
            threshold=found.threshold, threshold_ci95=found.threshold_ci,
            dispersion=found.dispersion, dispersion_p=found.dispersion_p, function="weber",
            about=("w: the Weber fraction of P(correct) = λ + (1 − 2λ)·Φ((r − 1)/"
                   "(w·√(1 + r²))), r the ratio (Pica et al. 2004), λ fitted within "
                   "[0, 0.1], the bootstrap's estimate of the fit's median bias taken off"),
            draws=found.w_draws)


def counts(level: float, rng: np.random.Generator) -> tuple[int, int]:
    """(fewer, more): a multiple of the ratio's whole numbers within [FEWEST, MOST], drawn
    uniformly among those that fit. ValueError for a ratio none fits."""
    ratio = Fraction(level).limit_denominator(100)
    multiples = [m for m in range(1, MOST + 1)
                 if ratio.denominator * m >= FEWEST and ratio.numerator * m <= MOST]
    if ratio <= 1 or not multiples:
        raise ValueError(f"no two counts from {FEWEST} to {MOST} dots have the ratio "
                         f"{level:g}")
    m = int(rng.choice(multiples))
    return ratio.denominator * m, ratio.numerator * m


def _other(side: str) -> str:
    return SIDES[1 - SIDES.index(side)]


def _radii(condition: str, numbers: dict[str, int], radius: float) -> dict[str, float]:
    """Each box's dot radius: one for both (equal size), or each box's such that both have
    the total area of the pair's geometric-mean count at `radius` (equal area)."""
    if condition == "equal-size":
        return {side: radius for side in numbers}
    mean = math.sqrt(math.prod(numbers.values()))
    return {side: radius * math.sqrt(mean / n) for side, n in numbers.items()}


def _array(rng: np.random.Generator, side: str, n: int, radius: float) -> DotArray:
    """A box's dots: a field whose expected hull area is drawn from HULL, whatever n."""
    hull = rng.uniform(*HULL)
    field_radius = math.sqrt(hull / (math.pi * (1.0 - HULL_FALL * n ** (-2 / 3))))
    centre = (BOX_X[side] + BOX / 2 + rng.uniform(-JITTER, JITTER),
              BOX_Y + BOX / 2 + rng.uniform(-JITTER, JITTER))
    return scatter(rng, n, radius, centre, field_radius)


def _box(canvas: Canvas, x: int) -> None:
    """A frame FRAME px wide inside the box's outer edge: four bars of whole pixels, set
    directly (nothing to anti-alias)."""
    frame = canvas.luminance[BOX_Y:BOX_Y + BOX, x:x + BOX]
    frame[:FRAME], frame[-FRAME:], frame[:, :FRAME], frame[:, -FRAME:] = (FRAME_INK,) * 4


def geometry(arrays: dict[str, DotArray], more_side: str) -> dict[str, float | int | str]:
    """Each box's count, dot diameter, total dot area, hull area, field and dot centres
    (px, and the lengths as shares of the image width), and the ratios of the
    non-numerical features, the box with more dots over the other (1: held equal)."""
    out: dict[str, float | int | str] = {"more": more_side, "box_size": BOX,
                                         "box_left_x": BOX_X["left"],
                                         "box_right_x": BOX_X["right"], "box_y": BOX_Y}
    for side, found in arrays.items():
        out[f"n_{side}"] = found.n
        out[f"dot_diameter_{side}"] = 2 * found.radius
        out[f"dot_diameter_{side}_of_width"] = 2 * found.radius / WIDTH
        out[f"total_area_{side}"] = found.total_area
        out[f"hull_area_{side}"] = found.hull_area
        out[f"field_radius_{side}"] = found.field_radius
        out[f"field_radius_{side}_of_width"] = found.field_radius / WIDTH
        out[f"dots_{side}"] = found.text()
    more, fewer = arrays[more_side], arrays[_other(more_side)]
    out["number_ratio"] = more.n / fewer.n
    out["dot_diameter_ratio"] = more.radius / fewer.radius
    out["total_area_ratio"] = more.total_area / fewer.total_area
    out["hull_area_ratio"] = more.hull_area / fewer.hull_area
    return out
