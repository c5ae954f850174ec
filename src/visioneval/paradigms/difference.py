"""`visioneval compare`'s differences between paradigm runs: for each run after the first and
each condition both fitted, the other run's figure minus the first's, with a 95% interval and
a two-sided p from each run's own parametric bootstrap (`stats.paired_draws`): the threshold
(and its ratio) for a forced choice, the PSE and the JND (and its ratio) for a comparison.
Each run's counts (metrics.json `points`) are refitted and resampled on their own, with a
seed per run's place in the comparison (independent samples get independent draws). An
estimate's midmean log2 error is compared from each run's own answers (its journal read
once, 8 bytes a trial), each run's trials resampled on their own."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from visioneval.core.store import RunStore
from visioneval.paradigms.fits import FEWEST_ESTIMATES, tally
from visioneval.stats.midmean import EXACT, midmean, midmean_draws
from visioneval.stats.paired_draws import PairedDraws, paired
from visioneval.stats.pse_fit import fit_pse
from visioneval.stats.psychometric_fit import RESAMPLES, SEED, threshold_draws


@dataclass(frozen=True)
class Difference:
    """Other minus first at one condition and figure; without a test, `reason` says why."""

    condition: str
    figure: str  # "threshold", "PSE" or "JND"
    other: str  # the run's label
    first_value: float | None
    other_value: float | None
    found: PairedDraws | None = None
    reason: str | None = None


Draws = dict[str, tuple[float | None, tuple[float, ...]]]


def _draws(metrics: dict[str, Any], curve: dict[str, Any], resamples: int, seed: int
           ) -> Draws | str:
    """Each figure's value and bootstrap draws from the curve's counts, or why none."""
    points = curve.get("points") or []
    if len(points) < 2:
        return f"{len(points)} level(s) answered"
    levels = [p["level"] for p in points]
    k = [p["k"] for p in points]
    n = [p["n"] for p in points]
    if metrics.get("kind") == "comparison":
        pse = fit_pse(levels, k, n, resamples=resamples, seed=seed)
        if pse.pse is None:
            return f"not reached ({pse.reason})"
        return {"PSE": (pse.pse, pse.pse_draws), "JND": (pse.jnd, pse.jnd_draws)}
    guess, criterion = curve.get("guess"), curve.get("criterion")
    if guess is None or criterion is None:
        return "no forced-choice fit in metrics.json"
    found = threshold_draws(levels, k, n, guess, "weibull", criterion, resamples=resamples,
                            seed=seed)
    if found.fit.threshold is None:
        return f"not reached ({found.fit.reason})"
    return {"threshold": (found.fit.threshold, tuple(float(v) for v in found.thresholds))}


def differences(runs: Sequence[tuple[str, dict[str, Any]]], resamples: int = RESAMPLES,
                seed: int = SEED) -> list[Difference]:
    """Each run after the first against the first (`runs`: label and metrics.json)."""
    if len(runs) < 2:
        return []
    cache: dict[tuple[int, str], Draws | str] = {}

    def draws(run: int, curve: dict[str, Any]) -> Draws | str:
        key = (run, curve["condition"])
        if key not in cache:
            cache[key] = _draws(runs[run][1], curve, resamples, seed + run)
        return cache[key]

    first = {c["condition"]: c for c in runs[0][1].get("curves", [])}
    out = []
    for run in range(1, len(runs)):
        label, metrics = runs[run]
        for curve in metrics.get("curves", []):
            mine = first.get(curve["condition"])
            if mine is None:
                continue
            a, b = draws(0, mine), draws(run, curve)
            if isinstance(a, str) or isinstance(b, str):
                why = "; ".join(f"{who}: {side}" for who, side in
                                ((runs[0][0], a), (label, b)) if isinstance(side, str))
                out.append(Difference(curve["condition"], "-", label, None, None,
                                      reason=f"nothing to compare: {why}"))
                continue
            for figure, (value, found) in b.items():
                base, base_draws = a[figure]
                out.append(Difference(curve["condition"], figure, label, base, value,
                                      paired(base_draws, found),
                                      None if base_draws and found else
                                      "no bootstrap refit converged"))
    return out


def estimate_differences(runs: Sequence[tuple[str, Path]], resamples: int = RESAMPLES,
                         seed: int = SEED) -> list[Difference]:
    """Each run after the first against the first (`runs`: label and run directory), per
    condition both answered: the other run's midmean log2 error minus the first's, each
    run's answers in range resampled on their own."""
    if len(runs) < 2:
        return []
    errors = [_errors(directory) for _, directory in runs]
    out = []
    for run in range(1, len(runs)):
        label = runs[run][0]
        for condition, theirs in errors[run].items():
            mine = errors[0].get(condition)
            if mine is None:
                continue
            short = [who for who, found in ((runs[0][0], mine), (label, theirs))
                     if found.size < FEWEST_ESTIMATES]
            if short:
                out.append(Difference(condition, "-", label, None, None, reason=(
                    f"nothing to compare: {', '.join(short)} answered fewer than "
                    f"{FEWEST_ESTIMATES} in range")))
                continue
            stream = zlib.crc32(condition.encode())
            first = midmean_draws(mine, resamples, (seed, stream))
            other = midmean_draws(theirs, resamples, (seed + run, stream))
            out.append(Difference(condition, "log2 error", label, midmean(mine),
                                  midmean(theirs), paired(first, other)))
    return out


def _errors(directory: Path) -> dict[str, np.ndarray]:
    """Each condition's log2 errors, one per answer in range, from the run's journal."""
    found = tally(RunStore.open(directory).iter_latest())
    return {condition: np.concatenate([
        np.log2(np.abs(np.frombuffer(cell.judged, dtype=np.float64) - level) + EXACT)
        for level, cell in counts.cells.items()] or [np.empty(0)])
        for condition, counts in found.items()}
