"""The touching-circles stimulus and question. BlindTest's "Are the two circles touching each
other?" (Rahmanzadehgervi et al. 2024, arXiv 2407.06581) as a two-alternative forced choice:
two pairs of black circles on white, one pair on the left half of the image and one on the
right, the circles of a pair equal and on one line (horizontal, vertical or diagonal, as in
BlindTest's layouts); in one pair the circles touch (gap 0), in the other they are `level`
px apart at their closest. The model says which pair has the gap; chance is 0.5 and there is
no "yes" to lean on.

Each pair's place jitters and its circles' diameter varies by ±8% around the condition's,
pair by pair, so neither an image edge nor a pair's length (2 diameters + the gap) tells the
answer. Each pair is drawn as one shape (`Canvas.discs`): a touching pair lets no light
through where its circles meet, and a gap of 0.125 px lets exactly that much through, mixed
in linear light; fixed 8-bit codes, no dithering (docs/touching.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from visioneval.paradigms.fits import Fitted
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

WIDTH, HEIGHT = 512, 256  # px: each pair has a 256 x 256 half
BACKGROUND = float(decode(255))  # white, as BlindTest's
INK = float(decode(0))  # black circles
DIAMETER = 48.0  # px: 0.19 of a half's side, within BlindTest's 0.14-0.25 of its canvas
SMALL = 24.0  # px: the second size, half the first
SIZE_JITTER = 0.08  # each pair's diameter is the condition's x U(0.92, 1.08)
JITTER = 16.0  # each pair's centre moves within ± this, px, both ways
GAPS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # px, log-spaced (factor 2)
TRIALS = 18  # 8 levels x 18 = 144 trials per curve
SIDES = ("left", "right")
LAYOUTS = {"horizontal": (DIAMETER, (0.0,)), "vertical": (DIAMETER, (90.0,)),
           "diagonal": (DIAMETER, (45.0, -45.0)), "horizontal-small": (SMALL, (0.0,))}
"""Condition -> (circle diameter in px, the angles of the line through a pair's centres,
degrees clockwise from the x axis, y down; a diagonal trial takes one of the two)."""
SIZE_RATIO = "threshold ratio, 48 px over 24 px circles"
SEPARATE_DRAWS = 20240709  # the permutation that pairs two curves' bootstrap draws
QUESTION = ("The image shows two pairs of circles, one pair on the left and one on the "
            "right. In one pair the two circles touch each other; in the other pair there "
            "is a gap between the two circles. Which pair has the gap between its circles? "
            "Answer with one word.\nOptions: left, right.")


class Touching(Paradigm):
    name = "touching"
    title = "Touching circles"
    summary = ("Touching circles (BlindTest, made parametric): the gap between two circles "
               "a model needs to tell a separated pair from a touching one, as a threshold "
               "in px, circle diameters and image widths, on rendered, self-describing "
               "stimuli.")
    kind = "choice"
    unit = "px"
    bridged = True  # the percentile interval covered 88-92% at this design (docs/touching.md)
    human = (
        HumanValue(
            "BlindTest's two circles", "100% accuracy expected, not measured",
            "Rahmanzadehgervi et al. 2024, arXiv 2407.06581; the README of "
            "anguyen8/vision-llms-are-blind at dd2a28d, line 34 ('the human expected "
            "accuracy of 100%')",
            "no people were tested; the expectation covers gaps of 0.05 to 0.50 diameters",
            "an expectation is not a threshold: no measurement of people on touching "
            "circles is published, and none for this two-pair task; measure people on these "
            "images to have one (`--backend human`, docs/human.md)"),
        HumanValue(
            "Gap in a ring (Landolt C) at visual acuity 1.0", "a gap of 1 arcmin",
            "ISO 8596, the standard optotype: at acuity grade 1 the ring's outer diameter "
            "subtends 5' and its gap 1'",
            "the gap's direction among eight, a ring five gaps across, daylight, the "
            "chart's designated viewing distance",
            "a visual angle needs a viewing distance: at 57 cm and 0.25 mm pixels 1 px is "
            "about 1.5 arcmin, so 1 arcmin is about 0.67 px, a gap near one display pixel; "
            "nearer or on a finer screen the same pixels subtend more. The Landolt gap is "
            "1/5 of its ring; the gaps here are 0.26% to 33% of a 48 px circle"),
        HumanValue(
            "A thin dark line on a bright field (minimum visible)",
            "0.5 arcsec wide at the highest luminances, 10 arcmin at the lowest",
            "Hecht & Mintz 1939, 'The visibility of single lines at various "
            "illuminations', J. Gen. Physiol. 22:593",
            "a single opaque line against an evenly lit background, foveal",
            "seeing a line far finer than a cone is limited by contrast (it dims a row of "
            "cones by about 1%), not by resolution; a gap narrower than a pixel is likewise "
            "present here as light in the pixels it crosses, so whether a person sees it "
            "depends on that light and the viewing distance, not on the pixel alone"),
    )

    def conditions(self) -> tuple[Condition, ...]:
        return tuple(Condition(name, GAPS, TRIALS, (
            Scale("% of circle diameter", 100.0 / diameter),
            Scale("% of image width", 100.0 / WIDTH)),
            note=f"{_layout_words(name)}, circles {diameter:g} px across")
            for name, (diameter, _) in LAYOUTS.items())

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        rng = np.random.default_rng(seed)
        diameter, angles = LAYOUTS[condition.name]
        angle = float(angles[int(rng.integers(len(angles)))])
        gapped = SIDES[int(rng.integers(2))]
        direction = (math.cos(math.radians(angle)), math.sin(math.radians(angle)))
        canvas = Canvas(WIDTH, HEIGHT, BACKGROUND)
        geometry: dict[str, float | int | str | bool] = {
            "layout": condition.name, "angle_deg": angle, "diameter": diameter,
            "gap_px": level, "gap_of_diameter": level / diameter,
            "gap_of_width": level / WIDTH, "gapped_side": gapped}
        for side, middle in zip(SIDES, (WIDTH / 4, 3 * WIDTH / 4), strict=True):
            size = diameter * rng.uniform(1 - SIZE_JITTER, 1 + SIZE_JITTER)
            cx = middle + rng.uniform(-JITTER, JITTER)
            cy = HEIGHT / 2 + rng.uniform(-JITTER, JITTER)
            gap = level if side == gapped else 0.0
            reach = size / 2 + gap / 2  # from the pair's centre to each circle's centre
            canvas.discs([(cx - reach * direction[0], cy - reach * direction[1]),
                          (cx + reach * direction[0], cy + reach * direction[1])],
                         size / 2, INK)
            geometry.update({f"{side}_x": cx, f"{side}_y": cy, f"{side}_diameter": size,
                             f"{side}_gap": gap})
        trial = Trial(paradigm=self.name, condition=condition.name, kind=self.kind,
                      level=level, unit=self.unit, options=SIDES, answer=gapped, seed=seed,
                      width=WIDTH, height=HEIGHT, stimulus=geometry)
        png = canvas.to_png(trial.model_dump(exclude={"rendering"}))
        return Drawn(png, trial, QUESTION)

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.touching.reader import read

        return read

    def summaries(self, curves: Sequence[object]) -> list[Summary]:
        """Whether the threshold is a limit in pixels (ratio 1) or scales with the circles
        (ratio 2): the 48 px circles' threshold over the 24 px ones', both horizontal."""
        found = {f.curve.condition: f for f in curves if isinstance(f, Fitted)}
        large, small = found.get("horizontal"), found.get("horizontal-small")
        if large is None or small is None:
            return []
        note = ("1: the same gap in pixels for both sizes; 2: the same gap as a share of "
                "the diameter. Interval: each curve's bootstrap thresholds, paired at "
                "random.")
        missing = [f.curve.condition for f in (large, small) if f.curve.threshold is None]
        if missing:
            return [Summary(SIZE_RATIO, "x", None, reason=f"{', '.join(missing)}: no "
                            "threshold", note=note, headline=False)]
        assert large.curve.threshold is not None and small.curve.threshold is not None
        value = large.curve.threshold / small.curve.threshold
        return [Summary(SIZE_RATIO, "x", value, ratio_interval(large.draws, small.draws),
                        note=note, headline=False)]


def ratio_interval(top: Sequence[float], bottom: Sequence[float]
                   ) -> tuple[float | None, float | None] | None:
    """The 95% percentile interval of the ratio of two independent curves' bootstrap
    thresholds. The kit resamples every curve from one seed, so the i-th draws of two
    curves move together; pairing them through a fixed random permutation makes the pairs
    independent. A refit that never reaches the criterion (math.inf) leaves an end open."""
    pairs = min(len(top), len(bottom))
    if pairs == 0:
        return None
    shuffled = np.random.default_rng(SEPARATE_DRAWS).permutation(np.asarray(bottom)[:pairs])
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.asarray(top)[:pairs] / shuffled
    ratios = ratios[~np.isnan(ratios)]
    if not len(ratios):
        return None
    low, high = np.quantile(ratios, [0.025, 0.975], method="inverted_cdf")
    return (None if not math.isfinite(low) else float(low),
            None if not math.isfinite(high) else float(high))


def _layout_words(name: str) -> str:
    return {"horizontal": "each pair side by side", "vertical": "each pair one above the "
            "other", "diagonal": "each pair on a diagonal (down or up to the right)",
            "horizontal-small": "each pair side by side"}[name]
