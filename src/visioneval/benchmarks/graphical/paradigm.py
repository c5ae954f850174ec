"""Graphical perception: Cleveland & McGill's (1984) proportional judgment. A chart shows
several elements, two of them marked with a black dot; the question asks what percentage
the smaller marked value is of the larger. Each encoding is a condition: position along a
common scale, position along identical non-aligned scales, length, angle, area and shading;
the true percentage is the level (12 to 89%), which element is larger and where the
elements stand are random. An answer is scored by log2(|judged − true| + 1/8) and each
encoding gets the midmean of those errors, and the run's order of the encodings is set
beside the ordering Cleveland & McGill give for people (docs/graphical.md)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from visioneval.benchmarks.graphical import charts
from visioneval.paradigms.paradigm import Condition, Drawn, HumanValue, Paradigm, Reader
from visioneval.paradigms.trial import Trial

LEVELS = (12.0, 19.0, 26.0, 33.0, 40.0, 47.0, 54.0, 61.0, 68.0, 75.0, 82.0, 89.0)  # true %
TRIALS = 10  # 12 levels x 10 = 120 trials per encoding
RANGE = ("0", "100")  # the answers the question allows
ASKED = ("Two of the elements are marked with a black dot. What percentage is the smaller "
         "marked value of the larger one? Answer with a number from 0 to 100.")
CITED = "Cleveland & McGill 1984, J Am Stat Assoc 79(387):531-554"


class Encoding:
    """One condition: its drawing, what the question says the value is, and its place in
    Cleveland & McGill's ordering (p. 536: 1 position along a common scale, 2 along
    non-aligned scales, 3 length, direction and angle, 4 area, 5 volume and curvature,
    6 shading and colour saturation)."""

    def __init__(self, name: str, draw: Callable[..., charts.Chart], shown: str, rank: int,
                 note: str) -> None:
        self.name, self.draw, self.shown, self.rank, self.note = name, draw, shown, rank, note


ENCODINGS = (
    Encoding("position-common", charts.common_scale,
             "The image shows a bar chart: all bars stand on one baseline with one scale.", 1,
             "five bars on one baseline and scale"),
    Encoding("position-nonaligned", charts.nonaligned,
             "The image shows two small bar charts with identical scales, one standing "
             "higher than the other.", 2, "two bar charts, same scale, baselines 30-60 px apart"),
    Encoding("length", charts.length,
             "The image shows bars floating at different heights; each bar's length shows "
             "its value.", 3, "four bars at different heights, no axis"),
    Encoding("angle", charts.pie,
             "The image shows a pie chart; each slice's angle shows its value.", 3,
             "a pie of five slices"),
    Encoding("area", charts.circles,
             "The image shows circles; each circle's area shows its value.", 4,
             "four circles, value = area"),
    Encoding("shading", charts.shading,
             "The image shows squares; each square's darkness shows its value (white is 0).",
             6, "four squares, value = 1 − L*/100"),
)


class Graphical(Paradigm):
    name = "graphical"
    title = "Graphical perception"
    summary = ("Graphical perception (Cleveland & McGill 1984): what percentage one marked "
               "chart element is of another, per encoding; Cleveland & McGill's midmean "
               "log2 error and the encodings' order beside people's.")
    kind = "estimate"
    unit = "%"
    ranked_by = "Cleveland & McGill 1984, p. 536"
    human = (
        HumanValue(
            "order of the encodings",
            "most to least accurate: position along a common scale; position along "
            "non-aligned scales; length, direction, angle; area; volume, curvature; "
            "shading, colour saturation",
            f"{CITED}, p. 536", "their hypothesis (ties within a tier, p. 537); their two "
            "experiments test position against length and position against angle",
            "the order of this run's encodings (the rank columns and Spearman's ρ): an "
            "order needs no viewing distance"),
        HumanValue(
            "position against angle",
            "position judgments 1.96 times as accurate: the averaged log2 error of angle "
            "about 0.97 above that of position",
            f"{CITED}, pp. 541, 544",
            "bar charts against pie charts, 51 subjects",
            "this run's angle error minus its position-common error (both log2); C&M warn "
            "that the two experiments' absolute errors are not to be compared"),
        HumanValue(
            "position against length",
            "position judgments 1.4 to 2.5 times as accurate: log2 error of length 0.51 "
            "to 1.32 above that of position, by judgment type",
            f"{CITED}, pp. 541, 544",
            "grouped and divided (stacked) bar charts, 51 subjects",
            "this run's length error minus its position-common error (both log2)"),
        HumanValue(
            "crowdsourced replication",
            "the position and length types ranked as in Cleveland & McGill; angle (pie) "
            "and circular and rectangular area added, rectangles about as accurate as "
            "circles; midmean log2 errors only in the paper's figures (not quoted here)",
            "Heer & Bostock 2010, CHI '10, 203-212, doi 10.1145/1753326.1753357",
            "Amazon Mechanical Turk, the same question and error, averaged as midmeans",
            "the order of the encodings; values read off a figure are not quoted"),
    )

    def conditions(self) -> tuple[Condition, ...]:
        return tuple(Condition(e.name, LEVELS, TRIALS, note=e.note, rank=e.rank)
                     for e in ENCODINGS)

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        encoding = next(e for e in ENCODINGS if e.name == condition.name)
        rng = np.random.default_rng(seed)
        larger_first = bool(rng.random() < 0.5)
        made = encoding.draw(rng, level / 100, larger_first)
        width = charts.SIZE
        geometry: dict[str, float | int | str | bool] = {
            "encoding": encoding.name, "value_unit": made.unit,
            "larger_value": made.larger, "smaller_value": made.smaller,
            "larger_dot_x": made.larger_dot[0], "larger_dot_y": made.larger_dot[1],
            "smaller_dot_x": made.smaller_dot[0], "smaller_dot_y": made.smaller_dot[1],
            "larger_dot_share_of_width": made.larger_dot[0] / width,
            "smaller_dot_share_of_width": made.smaller_dot[0] / width, **made.extra}
        if made.unit == "px":
            geometry["larger_share_of_width"] = made.larger / width
            geometry["smaller_share_of_width"] = made.smaller / width
        trial = Trial(paradigm=self.name, condition=condition.name, kind=self.kind,
                      level=level, unit=self.unit, options=RANGE, answer=f"{level:g}",
                      seed=seed, width=width, height=charts.SIZE, stimulus=geometry)
        png = made.canvas.to_png(trial.model_dump(exclude={"rendering"}),
                                 rng if made.dithered else None)
        return Drawn(png, trial, f"{encoding.shown} {ASKED}")

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.graphical.reader import read

        return read
