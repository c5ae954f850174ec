"""Three geometric illusions measured as points of subjective equality, each beside its
control. Each trial shows a standard and a comparison whose size is the standard's plus the
level (in % of the standard, signed); the question asks which is larger, and the curve
counts the answers naming the comparison (its side is drawn at random per trial). The PSE
is how much larger the comparison must be to look equal: the illusion moves it, its control
(the same figure without the inducers) does not, so the illusion's strength is the
difference of the two PSEs, and the control's JND over the standard is the Weber fraction
(docs/illusions.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from visioneval.benchmarks.illusions import ebbinghaus, mullerlyer, ponzo
from visioneval.benchmarks.illusions.figure import SIZE, TRIALS, Illusion
from visioneval.paradigms.contrasts import difference
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

ILLUSIONS: tuple[Illusion, ...] = (mullerlyer.ILLUSION, ebbinghaus.ILLUSION, ponzo.ILLUSION)
UNIT = "%"  # of the standard
STRENGTH_UNIT = "% of standard"


def illusion_of(condition: str) -> Illusion:
    """The illusion a condition belongs to (`ponzo` and `ponzo-control`: Ponzo)."""
    for illusion in ILLUSIONS:
        if condition in (illusion.name, illusion.control):
            return illusion
    raise ValueError(f"illusions has no condition {condition!r}")


class Illusions(Paradigm):
    name = "illusions"
    title = "Geometric illusions"
    summary = ("Müller-Lyer, Ebbinghaus and Ponzo illusions against their controls: how much "
               "larger the comparison must be to look equal (PSE, JND in % of the standard) "
               "and each illusion's strength, on rendered, self-describing stimuli.")
    kind = "comparison"
    unit = UNIT
    counted = "'comparison larger'"
    human = (
        HumanValue(
            "Müller-Lyer strength",
            "about +10 to +30% (approximate: the published sizes vary with the fins)",
            "Howe & Purves 2005 (PNAS 102:1234: 'considerable variation in the reported "
            "magnitude'); fin angle: Dewar 1967, Restle & Decker 1977; fin length: "
            "Perception 2023, doi:10.1177/03010066231178232",
            "a fins-out or fins-in shaft against a plain line or the opposite fins, by "
            "adjustment or constant stimuli; longer fins and smaller angles give more",
            "the strength in % of the shaft is a ratio of two lengths in one picture and can "
            "be set beside the model's muller-lyer strength; fins other than this page's "
            "(35 px at 30° on a 140 px shaft) move it"),
        HumanValue(
            "Ebbinghaus strength",
            "0 to (exceptionally) 10% of the target's size; no illusion in 33% of the "
            "configurations",
            "Knol, Huys, Sarrazin & Jirsa 2015 (Front. Psychol. 6:1679)",
            "a target in a ring of context circles against a lone probe, staircase on "
            "'which is bigger?', 3 target sizes x 3 context sizes x 3 distances",
            "in % of the target's size, as the model's ebbinghaus strength (with large "
            "circles around the standard people's sign is negative: it looks smaller); the "
            "size ratio and the gap matter, not the pixels"),
        HumanValue(
            "Ponzo strength",
            "about +5 to +15% (approximate, not from one published table; the line nearer "
            "the apex looks longer)",
            "measured beside Müller-Lyer by Cretenoud, Grzeczkowski, Bertamini & Herzog "
            "2020 (J. Vis. 20(6):4)",
            "two equal lines between converging lines, by adjustment; grows with the rails' "
            "convergence",
            "in % of the line's length, as the model's ponzo strength; the rails' angle "
            "(20° here) and the lines' distance from the apex move it"),
    )

    def conditions(self) -> tuple[Condition, ...]:
        out = []
        for illusion in ILLUSIONS:
            scales = (Scale("px", illusion.standard_px / 100),
                      Scale("% of image width", illusion.standard_px / SIZE))
            out += [Condition(illusion.name, illusion.levels, TRIALS, scales, illusion.shows,
                              chart=illusion.title),
                    Condition(illusion.control, illusion.levels, TRIALS, scales,
                              illusion.control_shows, chart=illusion.title)]
        return tuple(out)

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        illusion = illusion_of(condition.name)
        picture = illusion.draw(level, condition.name == illusion.control,
                                np.random.default_rng(seed))
        standard = picture.standard_side
        comparison = next(o for o in illusion.options if o != standard)
        answer = comparison if level > 0 else standard if level < 0 else ""
        trial = Trial(paradigm=self.name, condition=condition.name, kind=self.kind,
                      level=level, unit=self.unit, options=illusion.options, answer=answer,
                      positive=comparison, seed=seed, width=SIZE, height=SIZE,
                      stimulus=picture.geometry)
        png = picture.canvas.to_png(trial.model_dump(exclude={"rendering"}))
        return Drawn(png, trial, illusion.question)

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.illusions.reader import read

        return read

    def summaries(self, curves: Sequence[object]) -> list[Summary]:
        """Per illusion run: its strength (PSE with the inducers − PSE without) and its
        control's JND over the standard; an illusion neither of whose curves ran has none."""
        found = {f.curve.condition: f for f in curves if isinstance(f, Fitted)}
        ran = [i for i in ILLUSIONS if i.name in found or i.control in found]
        strengths = [difference(
            f"{i.name} strength", STRENGTH_UNIT, found.get(i.name), found.get(i.control),
            note=f"PSE of {i.name} − PSE of {i.control}: how far the inducers move the "
                 "point of equality (positive: the standard looks larger); 95% interval "
                 "from every pair of the two curves' bootstrap draws")
            for i in ran]
        return strengths + [_weber(i, found.get(i.control)) for i in ran]


def _weber(illusion: Illusion, control: Fitted | None) -> Summary:
    """The control's JND over the standard: the level is already in % of it."""
    name = f"{illusion.name} Weber fraction"
    note = f"JND of {illusion.control} / standard (the JND without the inducers)"
    if control is None:
        return Summary(name, "", None, reason=f"{illusion.control} was not run", note=note)
    c = control.curve
    if c.jnd is None:
        return Summary(name, "", None, note=note,
                       reason=f"{illusion.control} not reached: {c.reason or 'no fit'}")
    ci = c.jnd_ci95
    return Summary(name, "", c.jnd / 100, None if ci is None else (
        None if ci[0] is None else ci[0] / 100, None if ci[1] is None else ci[1] / 100),
        note=note, width=True)
