"""From records to curves: answers counted per condition and level in one pass (memory flat in
the number of trials), then each condition fitted by its kind. A forced choice gets the
threshold fit every visioneval threshold uses (`stats.psychometric_fit`: a Weibull with γ =
1 / options, λ fitted within [0, 0.1], parametric-bootstrap interval with open ends, widened
by bootstrap bridging for a paradigm that asks it, `Paradigm.bridged`); a comparison gets
the point of subjective equality (`stats.pse_fit`: a cumulative Gaussian with tied lapses).
A failed request is an error in no figure; an unparsed answer is counted, and is a wrong
answer of a forced choice (as a person who presses no key is) but in no comparison's count
(it says neither direction). A paradigm may fit its counts with a model of its own instead
(`Paradigm.fit`: the Weber fraction of comparing two numbers). An estimate keeps each answer
read as a number within the asked range in a compact float array per level (8 bytes a trial)
and gets Cleveland & McGill's midmean log2 error with a bootstrap interval over its trials
(`stats.midmean`); an answer that is no number, or one outside the range, is counted and in
no error."""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from visioneval.core.records import Record
from visioneval.paradigms.metrics import Curve, Judged, OwnFigure, Point, Scaled
from visioneval.paradigms.paradigm import Condition, OwnFit, Paradigm, Scale
from visioneval.stats.binomial import wilson
from visioneval.stats.midmean import EXACT, midmean, midmean_draws, percentile_interval
from visioneval.stats.pse_fit import fit_pse
from visioneval.stats.psychometric import Sigmoid
from visioneval.stats.psychometric_fit import (
    bridged_interval,
    open_ends,
    threshold_draws,
    threshold_interval,
)

FORM: Sigmoid = "weibull"
FEWEST_ESTIMATES = 4  # answers in range an estimate's midmean needs (a quarter each side)


@dataclass
class Cell:
    n: int = 0  # answered (parsed or not)
    k: int = 0  # correct (choice) or the positive option (comparison)
    unparsed: int = 0
    out_of_range: int = 0  # an estimate's number outside the asked range
    judged: array = field(default_factory=lambda: array("d"))  # an estimate's numbers


@dataclass
class Tally:
    """One condition's counts by level, and its failed requests."""

    cells: dict[float, Cell] = field(default_factory=dict)
    errors: int = 0


def tally(records: Iterable[Record]) -> dict[str, Tally]:
    found: dict[str, Tally] = {}
    for record in records:
        meta = record.metadata
        condition, level = meta.get("condition"), meta.get("level")
        if not isinstance(condition, str) or not isinstance(level, int | float):
            continue  # not a paradigm's trial
        into = found.setdefault(condition, Tally())
        if not record.ok:
            into.errors += 1
            continue
        cell = into.cells.setdefault(float(level), Cell())
        block = record.scores.get("answer", {})
        cell.n += 1
        cell.unparsed += int(block.get("unparsed", 0.0) == 1.0)
        cell.k += int(block.get("counted", 0.0) == 1.0)
        cell.out_of_range += int(block.get("out_of_range", 0.0) == 1.0)
        judged = block.get("judged")
        if isinstance(judged, int | float):
            cell.judged.append(float(judged))
    return found


@dataclass(frozen=True)
class Fitted:
    """A curve and its bootstrap draws of the figure (threshold or PSE), for summaries that
    combine curves."""

    curve: Curve
    draws: tuple[float, ...] = ()


def fit_curves(paradigm: Paradigm, tallies: dict[str, Tally], bootstrap: int, seed: int
               ) -> list[Fitted]:
    """Each condition's curve; its bootstrap draws from a stream of its own (the
    bootstrap's seed plus the condition's place among the paradigm's conditions), so two
    curves' draws pair as independent."""
    known = {c.name: c for c in paradigm.conditions()}
    order = [*known, *sorted(set(tallies) - set(known))]
    return [_fit(paradigm, known.get(name), name, tallies[name], bootstrap,
                 curve_seed(seed, name))
            for name in order if name in tallies]


def curve_seed(seed: int, condition: str) -> int:
    """A curve's own bootstrap seed, from the run's and the condition's name: with one seed
    for every curve their resamples would share random numbers, and draws that a summary
    pairs across curves (a CSF refit, an illusion against its control) would be correlated
    (about 0.5 between two curves' thresholds), not independent as the curves are."""
    return int(np.random.SeedSequence([seed, *condition.encode()]).generate_state(1)[0])


def _points(found: Tally) -> list[Point]:
    return [Point(level=level, n=c.n, k=c.k, p=c.k / c.n, ci95=wilson(c.k, c.n),
                  n_unparsed=c.unparsed)
            for level, c in sorted(found.cells.items()) if c.n > 0]


def _fit(paradigm: Paradigm, condition: Condition | None, name: str, found: Tally,
         bootstrap: int, seed: int) -> Fitted:
    if paradigm.kind == "estimate":
        return _estimate(paradigm, condition, name, found, bootstrap, seed)
    points = _points(found)
    base = Curve(condition=name, kind=paradigm.kind,
                 unit=(condition.unit if condition else "") or paradigm.unit,
                 n=sum(p.n for p in points), n_errors=found.errors,
                 n_unparsed=sum(p.n_unparsed for p in points), points=points,
                 status="not reached", note=condition.note if condition else "",
                 chart=condition.chart if condition else "",
                 published_rank=condition.rank if condition else None)
    if condition is not None and not condition.fitted:
        return Fitted(base.model_copy(update={
            "status": "control",
            "guess": 1 / paradigm.alternatives if paradigm.kind == "choice" else None}))
    if len(points) < 2:
        return Fitted(base.model_copy(update={"reason": f"{len(points)} level(s) answered; "
                                              "a fit needs at least 2"}))
    levels = [p.level for p in points]
    k = [p.k for p in points]
    n = [p.n for p in points]
    scales = condition.scales if condition else ()
    own = paradigm.fit(levels, k, n, bootstrap, seed)
    if own is not None:
        return Fitted(_own_curve(base, own, paradigm), own.draws)
    if paradigm.kind == "comparison":
        pse = fit_pse(levels, k, n, resamples=bootstrap, seed=seed)
        curve = base.model_copy(update={
            "status": pse.status, "reason": pse.reason, "pse": pse.pse, "jnd": pse.jnd,
            "sigma": pse.sigma, "lapse": pse.lapse, "pse_ci95": pse.pse_ci,
            "jnd_ci95": pse.jnd_ci,
            "scaled": _scaled(scales, [("PSE", pse.pse, pse.pse_ci),
                                       ("JND", pse.jnd, pse.jnd_ci)])})
        return Fitted(curve, pse.pse_draws)
    guess = 1 / paradigm.alternatives
    widened = None
    if paradigm.bridged:
        draws, widened = bridged_interval(levels, k, n, guess, FORM, paradigm.criterion,
                                          resamples=bootstrap, seed=seed)
    else:
        draws = threshold_draws(levels, k, n, guess, FORM, paradigm.criterion,
                                resamples=bootstrap, seed=seed,
                                dispersion=paradigm.dispersion)
    done = draws.fit
    update: dict[str, object] = {
        "status": done.status, "reason": done.reason, "guess": guess,
        "criterion": paradigm.criterion, "form": FORM, "alpha": done.alpha,
        "beta": done.beta, "lapse": done.lapse, "threshold": done.threshold,
        "slope": done.slope, "dispersion": done.dispersion,
        "dispersion_p": done.dispersion_p}
    if done.threshold is not None and len(draws.thresholds):
        interval = open_ends(widened or threshold_interval(draws.thresholds, min(levels),
                                                          max(levels)))
        update["threshold_ci95"] = interval
        update["bridged"] = widened is not None
        update["scaled"] = _scaled(scales, [("threshold", done.threshold, interval)])
    return Fitted(base.model_copy(update=update),
                  tuple(float(v) for v in draws.thresholds))


def _own_curve(base: Curve, own: OwnFit, paradigm: Paradigm) -> Curve:
    """A curve from the paradigm's own fit: its figure, and the threshold, lapse and
    dispersion of that fit where a forced choice has them."""
    return base.model_copy(update={
        "status": own.status, "reason": own.reason,
        "guess": 1 / paradigm.alternatives if paradigm.kind == "choice" else None,
        "criterion": paradigm.criterion, "form": own.function, "alpha": own.fitted,
        "lapse": own.lapse, "threshold": own.threshold, "threshold_ci95": own.threshold_ci95,
        "dispersion": own.dispersion, "dispersion_p": own.dispersion_p,
        "own_figure": OwnFigure(name=own.name, unit=own.unit, value=own.value,
                                ci95=own.ci95, about=own.about)})
def _estimate(paradigm: Paradigm, condition: Condition | None, name: str, found: Tally,
              bootstrap: int, seed: int) -> Fitted:
    """The midmean log2 error over every answer in range, its percentile interval from
    `bootstrap` resamples of the trials (a stream of its own per condition), and per level
    the median answer and the midmean error."""
    judged, errors = [], []
    for level, cell in sorted(found.cells.items()):
        values = np.frombuffer(cell.judged, dtype=np.float64)
        level_errors = np.log2(np.abs(values - level) + EXACT)
        errors.append(level_errors)
        judged.append(Judged(level=level, n=len(values), n_unparsed=cell.unparsed,
                             n_out_of_range=cell.out_of_range,
                             median=float(np.median(values)) if len(values) else None,
                             error=midmean(level_errors)))
    every = np.concatenate(errors) if errors else np.empty(0)
    cells = found.cells.values()
    base = Curve(condition=name, kind=paradigm.kind, unit=paradigm.unit,
                 n=sum(c.n for c in cells), n_errors=found.errors,
                 n_unparsed=sum(c.unparsed for c in cells),
                 n_out_of_range=sum(c.out_of_range for c in cells), points=[],
                 judged=judged, status="not measured",
                 note=condition.note if condition else "",
                 published_rank=condition.rank if condition else None)
    if every.size < FEWEST_ESTIMATES:
        return Fitted(base.model_copy(update={
            "reason": f"{every.size} answer(s) read as a number in range; a midmean needs "
                      f"at least {FEWEST_ESTIMATES}"}))
    stream = zlib.crc32(name.encode())  # each condition's resamples independent of the rest
    draws = midmean_draws(every, bootstrap, (seed % 2**64, stream))
    return Fitted(base.model_copy(update={
        "status": "measured", "error": midmean(every),
        "error_ci95": percentile_interval(draws)}), tuple(float(d) for d in draws))


Figure = tuple[str, float | None, tuple[float | None, float | None] | None]


def _scaled(scales: tuple[Scale, ...], figures: list[Figure]) -> list[Scaled]:
    """Each figure in each of the condition's other units (factors are positive)."""
    out = []
    for scale in scales:
        for name, value, interval in figures:
            if value is None:
                continue
            ci = None if interval is None else (
                None if interval[0] is None else interval[0] * scale.factor,
                None if interval[1] is None else interval[1] * scale.factor)
            out.append(Scaled(name=name, unit=scale.unit, value=value * scale.factor,
                              ci95=ci))
    return out
