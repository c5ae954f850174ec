"""Thresholds from BlindTest's magnitudes (magnitude.py): per protocol, proportion correct
at each level, a Weibull ψ(x) = γ + (1 − γ − λ)·F(x; α, β) fitted by maximum likelihood
(`visioneval.stats.psychometric_fit`, as `visioneval psychophysics` fits), the level where
ψ reaches 0.75 correct, and its 95% interval from 1,000 parametric-bootstrap refits (an end
outside the tested levels is open: None).

"Not reached" (no number, never 0), with its reason: fewer than two levels answered, the
answers do not beat guessing, the fitted ceiling stays below the criterion, or the
criterion lies outside the tested levels (docs/psychophysics.md, "The fit")."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.blindtest.magnitude import Magnitude
from visioneval.stats.binomial import wilson
from visioneval.stats.psychometric import Sigmoid
from visioneval.stats.psychometric_fit import (
    CRITERION,
    RESAMPLES,
    SEED,
    open_ends,
    threshold_draws,
    threshold_interval,
)

FORM: Sigmoid = "weibull"


class LevelTally:
    """Right answers and answered rows at each level of one magnitude."""

    def __init__(self) -> None:
        self.cells: dict[float, list[int]] = {}

    def add(self, level: float, right: bool) -> None:
        cell = self.cells.setdefault(level, [0, 0])
        cell[0] += 1
        cell[1] += right

    def points(self) -> list[dict[str, Any]]:
        return [{"level": level, "n": n, "correct": k, "p": k / n,
                 "ci95": list(wilson(k, n))} for level, (n, k) in sorted(self.cells.items())]


FitKey = tuple[tuple[float, ...], tuple[int, ...], tuple[int, ...], float]


def threshold(magnitude: Magnitude, tally: LevelTally | None,
              fits: dict[FitKey, dict[str, Any]]) -> dict[str, Any]:
    """metrics.json's block for one magnitude under one protocol. `fits`: the run's fits so
    far, by their counts (label sets that agree on every label refit nothing)."""
    points = tally.points() if tally is not None else []
    block: dict[str, Any] = {
        "task": magnitude.task, "unit": magnitude.unit, "criterion": CRITERION,
        "guess": magnitude.guess, "form": FORM, "n_trials": sum(p["n"] for p in points),
        "n_levels": len(points), "points": points}
    if len(points) < 2:
        return block | {"status": "not reached", "reason": _too_few(magnitude, len(points))}
    block |= {"lowest_level": points[0]["level"], "highest_level": points[-1]["level"]}
    key = (tuple(p["level"] for p in points), tuple(p["correct"] for p in points),
           tuple(p["n"] for p in points), magnitude.guess)
    if key not in fits:
        fits[key] = _fit(*key)
    return block | fits[key]


def _too_few(magnitude: Magnitude, levels: int) -> str:
    side = ("rows with the circles apart (distance above 0)" if magnitude.key == "distance"
            else f"rows whose metadata has `{magnitude.key}`")
    return (f"{levels} level(s) among the {side}; a fit needs at least 2 (`visioneval data "
            "synth-blindtest` draws denser levels, docs/blindtest.md)")


def _fit(levels: tuple[float, ...], correct: tuple[int, ...], n: tuple[int, ...],
         guess: float) -> dict[str, Any]:
    """The fit's figures: status, parameters, threshold and its interval."""
    draws = threshold_draws(levels, correct, n, guess, FORM, CRITERION, resamples=RESAMPLES,
                            seed=SEED)
    done = draws.fit
    out: dict[str, Any] = {"status": done.status, "alpha": done.alpha, "beta": done.beta,
                           "lapse": done.lapse, "deviance": done.deviance,
                           "chance_p": done.chance_p}
    if done.threshold is None:
        return out | {"reason": done.reason}
    out |= {"threshold": done.threshold, "slope": done.slope,
            "resamples": len(draws.thresholds)}
    if len(draws.thresholds):
        out["threshold_ci95"] = list(open_ends(threshold_interval(
            draws.thresholds, min(levels), max(levels))))
    return out
