"""`visioneval compare`'s threshold differences: for each run after the first and each
(feature, set size) both runs fitted, the other run's threshold minus the first's and their
ratio (levels are on ratio scales), with 95% intervals and a two-sided p from a parametric
bootstrap of each run's own counts (`stats.paired_draws`).

Each run's detection counts (metrics.json `points`) are refitted and resampled on their own
(`stats.psychometric_fit.threshold_draws`, a seed per run's place in the comparison, since
the runs are independent samples and shared random numbers would make their draws move
together; simulated as the run's own bootstrap was, `dispersion_model`), and the i-th draw
of one run is paired with the i-th of the other. The interval
is the 2.5th and 97.5th percentile of the paired differences (or ratios); p is twice the
smaller share of differences at or below 0 and at or above 0, with one added to each count
(a Monte Carlo p is never 0; Davison & Hinkley 1997, section 4.2), so p < 0.05 when the
interval leaves out 0.

A refit whose ψ never reaches the criterion has the threshold math.inf ("beyond every
level", as in the run's own interval): its difference with a finite draw is ±inf and sorts
past every number (an interval end then reads "unbounded"). A pair where neither refit
reaches it has no difference: it is left out of the interval and counted as a tie (on
both sides) in p, and the table states how many there were."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from visioneval.stats import psychometric_fit
from visioneval.stats.paired_draws import paired
from visioneval.stats.psychometric_fit import threshold_draws

if TYPE_CHECKING:
    from visioneval.stats.psychometric_fit import ThresholdDraws

LEVEL = 0.05  # two-sided, for "significant"


@dataclass(frozen=True)
class Condition:
    """One run's detection counts at one feature and set size, with its fit's settings."""
    feature: str
    set_size: int
    unit: str
    levels: list[float]
    correct: list[int]
    trials: list[int]
    guess: float
    form: str
    criterion: float
    dispersion: str = "binomial"  # how the run's bootstrap simulated counts

    @property
    def settings(self) -> tuple[float, str, float]:
        return self.criterion, self.form, self.guess


def conditions(metrics: dict[str, Any]) -> dict[tuple[str, int], Condition]:
    """Every detection fit a run's metrics.json lists, with the counts behind it."""
    out = {}
    points = [p for p in metrics.get("points", []) if p["experiment"] == "detection"]
    for t in metrics.get("thresholds", []):
        found = sorted((p for p in points if p["feature"] == t["feature"]
                        and p["set_size"] == t["set_size"]), key=lambda p: p["level"])
        out[(t["feature"], t["set_size"])] = Condition(
            t["feature"], t["set_size"], t.get("unit", ""), [p["level"] for p in found],
            [p["correct"] for p in found], [p["n"] for p in found], t["guess"], t["form"],
            t["criterion"], metrics.get("dispersion_model", "binomial"))
    return out


@dataclass(frozen=True)
class Difference:
    """Other minus first at one condition. Without a test (`reason` says why) every number
    but the thresholds is None. Interval ends may be ±math.inf (unbounded)."""
    feature: str
    set_size: int
    unit: str
    first: str  # the runs' labels
    other: str
    first_threshold: float | None = None
    other_threshold: float | None = None
    difference: float | None = None
    difference_ci95: tuple[float, float] | None = None
    ratio: float | None = None
    ratio_ci95: tuple[float, float] | None = None
    p_value: float | None = None
    pairs: int = 0  # bootstrap pairs
    undefined: int = 0  # pairs where neither refit reached the criterion
    reason: str | None = None

    @property
    def significant(self) -> bool | None:
        return None if self.p_value is None else self.p_value < LEVEL


def compare_draws(first: ThresholdDraws, other: ThresholdDraws, where: Difference
                  ) -> Difference:
    """The difference of two independent fits' thresholds from their bootstrap draws
    (`where` names the condition and the runs; its numbers are filled in)."""
    a, b = first.fit.threshold, other.fit.threshold
    if a is None or b is None:
        raise ValueError("both fits need a threshold to be compared")
    found = paired(first.thresholds, other.thresholds)
    if found is None:
        return replace(where, first_threshold=a, other_threshold=b,
                       reason="no bootstrap refit converged")
    return replace(where, first_threshold=a, other_threshold=b, difference=b - a,
                   difference_ci95=found.difference_ci95,
                   ratio=b / a if found.ratio_ci95 is not None and a > 0 and b > 0 else None,
                   ratio_ci95=found.ratio_ci95, p_value=found.p_value, pairs=found.pairs,
                   undefined=found.undefined)


def differences(runs: Sequence[tuple[str, dict[str, Any]]], resamples: int | None = None,
                seed: int | None = None) -> list[Difference]:
    """Each run after the first against the first (`runs`: label and metrics.json), at
    every condition both fitted; each run's counts are refitted and resampled once."""
    resamples = psychometric_fit.RESAMPLES if resamples is None else resamples
    seed = psychometric_fit.SEED if seed is None else seed
    found = [conditions(metrics) for _, metrics in runs]
    cache: dict[tuple[int, tuple[str, int]], ThresholdDraws | str] = {}

    def draws(run: int, key: tuple[str, int]) -> ThresholdDraws | str:
        if (run, key) not in cache:
            cache[(run, key)] = _draws(found[run][key], resamples, seed + run)
        return cache[(run, key)]

    out = []
    first_label = runs[0][0] if runs else ""
    for run in range(1, len(runs)):
        for key in [k for k in found[0] if k in found[run]]:
            c = found[0][key]
            where = Difference(c.feature, c.set_size, c.unit, first_label, runs[run][0])
            other = found[run][key]
            if other.settings != c.settings:
                out.append(_without(where, "fitted with different settings (criterion, "
                                    f"form, guess): {_settings(c)} against {_settings(other)}"))
                continue
            a, b = draws(0, key), draws(run, key)
            if isinstance(a, str) or isinstance(b, str) or a.fit.threshold is None \
                    or b.fit.threshold is None:
                out.append(_without(where, _no_threshold(where, a, b),
                                    None if isinstance(a, str) else a.fit.threshold,
                                    None if isinstance(b, str) else b.fit.threshold))
                continue
            out.append(compare_draws(a, b, where))
    return out


def _draws(condition: Condition, resamples: int, seed: int) -> ThresholdDraws | str:
    """The refit and its draws, or why there is none (one line)."""
    if len(condition.levels) < 2:
        return f"{len(condition.levels)} level(s) with answered trials; a fit needs at least 2"
    try:
        return threshold_draws(condition.levels, condition.correct, condition.trials,
                               condition.guess,
                               "weibull" if condition.form == "weibull" else "logistic",
                               condition.criterion, resamples=resamples, seed=seed,
                               dispersion="fitted" if condition.dispersion == "fitted"
                               else "binomial")
    except ValueError as exc:
        return str(exc)


def _no_threshold(where: Difference, a: ThresholdDraws | str, b: ThresholdDraws | str) -> str:
    parts = []
    for label, side in ((where.first, a), (where.other, b)):
        if isinstance(side, str):
            parts.append(f"{label}: not fitted ({side})")
        elif side.fit.threshold is None:
            parts.append(f"{label}: not reached ({side.fit.reason})")
    return "no threshold to compare: " + "; ".join(parts)


def _without(where: Difference, reason: str, first: float | None = None,
             other: float | None = None) -> Difference:
    return replace(where, reason=reason, first_threshold=first, other_threshold=other)


def _settings(c: Condition) -> str:
    return f"{c.criterion:g}, {c.form}, {c.guess:.3g}"


def interval_text(span: tuple[float, float] | None, digits: int = 3) -> str:
    """"low to high"; an infinite end reads "unbounded"."""
    if span is None:
        return "-"
    return " to ".join("unbounded" if math.isinf(v) else f"{v:.{digits}g}" for v in span)
