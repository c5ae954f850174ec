"""Steep psychometric functions and the fit's bound on the slope: the recovery's simulated
Weibull observer (measure/psychophysics_recovery.py: γ = 1/3, 8 levels x 40 trials,
λ = 0.02, criterion 0.75) with β from 1.2 to 6, at the recovery's levels (α/4 to 3α), at
1.5 times their spacing, and at levels mostly above threshold (0.7α to 8.4α), seeded.
Per cell: the threshold's median relative error and median absolute relative error (each
with its Monte Carlo error: a bootstrap over the runs), the coverage of the true threshold
by the 95% interval (an open end counts as infinite; a run with no threshold misses), and
the median relative width of that interval, for three fits:

- bounded: visioneval's fit as it is (`fit` and `threshold_draws`: F rises from 0.05 to
  0.95 over at least twice the smallest step between tested levels);
- unbounded: the same pieces of the fit (`_prepare`, `_best_fit`, `_refit_all`) with β's
  upper bound put back to the fit's general limit (30) instead of the width bound;
- soft: as unbounded, with a penalty on the log-likelihood of −(log β − log β_w)²/(2s²)
  above the width bound β_w (s = log 2 / 2: a fit twice as steep as the bound loses 2 log
  units), in place of the hard bound. The fit's own optimiser and Newton refits run with
  the penalised log-likelihood swapped in for the plain one (`_penalised`).

    uv run python measure/steep_slopes.py --runs 400 --resamples 200
"""

from __future__ import annotations

import argparse
import math
import sys
import types
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from psychophysics_recovery import GUESS, LEVELS, TRIALS, levels_for  # noqa: E402

from visioneval.stats import psychometric_fit as pf  # noqa: E402
from visioneval.stats.psychometric import criterion_level, psi  # noqa: E402

BETAS = (1.2, 2.0, 3.0, 4.5, 6.0)
ALPHA, LAPSE = 1.0, 0.02
VARIANTS = ("bounded", "unbounded", "soft")
SOFTNESS = math.log(2.0) / 2  # s of the soft penalty, in log β
MC_RESAMPLES = 1000  # bootstrap over runs for the Monte Carlo errors


def designs() -> dict[str, np.ndarray]:
    """Tested levels per design, for α = 1."""
    default = levels_for(ALPHA, LEVELS)
    centre = np.log(default).mean()
    wide = np.exp(centre + 1.5 * (np.log(default) - centre))
    above = ALPHA * np.geomspace(0.7, 8.4, LEVELS)  # the default step, 2 levels below
    return {"default": default, "1.5x spacing": wide, "mostly above": above}


def width_bound(levels: np.ndarray) -> float:
    """The fit's largest β at these levels (its width bound)."""
    data = pf._prepare(levels, [0] * len(levels), [1] * len(levels), GUESS, "weibull",
                       pf.CRITERION, pf.LAPSE_BOUNDS)
    return math.exp(data.bounds[1][1])


def _penalised(bound: float) -> types.SimpleNamespace:
    """`_best_fit` and `_refit_all` of the fit, with its log-likelihood, gradient and
    curvature (`_log_likelihood`, `_objective`, `_score`) each minus the soft penalty on
    log β above log `bound`."""
    top, scale = math.log(bound), SOFTNESS ** 2

    def excess(theta: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, theta[..., 1] - top)

    def log_likelihood(theta, data, k):
        return pf._log_likelihood(theta, data, k) - excess(theta) ** 2 / (2 * scale)

    def objective(theta, data, k):
        value, grad = pf._objective(theta, data, k)
        grad = grad.copy()
        grad[1] += float(excess(theta)) / scale
        return value + float(excess(theta)) ** 2 / (2 * scale), grad

    def score(theta, data, k):
        s, hessian, information = pf._score(theta, data, k)
        over = excess(theta) > 0
        s = s.copy()
        s[:, 1] -= excess(theta) / scale
        hessian[:, 1, 1] -= over / scale
        information[:, 1, 1] += over / scale
        return s, hessian, information

    names = {**vars(pf), "_log_likelihood": log_likelihood, "_objective": objective,
             "_score": score}

    def rebound(function: Callable) -> Callable:
        return types.FunctionType(function.__code__, names, function.__name__,
                                  function.__defaults__)

    for name in ("_maximise", "_starts", "_best_fit", "_ascend", "_refit_all"):
        names[name] = rebound(getattr(pf, name))
    return types.SimpleNamespace(best_fit=names["_best_fit"], refit_all=names["_refit_all"])


@dataclass(frozen=True)
class Outcome:
    """One run's fit: the threshold (None: not reached) and its 95% interval."""

    threshold: float | None
    interval: tuple[float, float] | None


def fit_variant(variant: str, levels: np.ndarray, k: np.ndarray, resamples: int,
                seed: int) -> Outcome:
    """The threshold and bootstrap interval of one variant, simulated and refitted as
    `threshold_draws` does."""
    n = np.full(len(levels), TRIALS)
    if variant == "bounded":
        drawn = pf.threshold_draws(levels, k, n, GUESS, resamples=resamples, seed=seed)
        if drawn.fit.threshold is None:
            return Outcome(None, None)
        return Outcome(drawn.fit.threshold, pf.threshold_interval(
            drawn.thresholds, float(levels.min()), float(levels.max())))
    data = pf._prepare(levels, k, n, GUESS, "weibull", pf.CRITERION, pf.LAPSE_BOUNDS)
    soft_at = math.exp(data.bounds[1][1])
    data = replace(data, bounds=[data.bounds[0], tuple(np.log(pf._WEIBULL_BETA)),
                                 data.bounds[2]])
    pieces = (_penalised(soft_at) if variant == "soft" else
              types.SimpleNamespace(best_fit=pf._best_fit, refit_all=pf._refit_all))
    kf = data.k
    theta = pieces.best_fit(data, kf)
    log_l = float(pf._log_likelihood(theta, data, kf))
    chance = float((kf * math.log(GUESS) + (data.n - kf) * math.log1p(-GUESS)).sum())
    from scipy.stats import chi2

    chance_p = float(chi2.sf(max(0.0, 2.0 * (log_l - chance)), df=3))
    alpha, beta, lapse = pf._natural(theta, "weibull")
    _, _, threshold = pf._judge(alpha, beta, lapse, GUESS, "weibull", pf.CRITERION,
                                chance_p, float(levels.min()), float(levels.max()))
    if threshold is None:
        return Outcome(None, None)
    p, _, _ = pf._probabilities(theta, data)
    counts = np.random.default_rng(seed).binomial(data.n.astype(np.int64), p,
                                                  size=(resamples, len(data.t)))
    thetas, converged = pieces.refit_all(data, counts.astype(np.float64), theta)
    draws = pf._criterion_levels(thetas[converged], pf.CRITERION, data)
    return Outcome(threshold, pf.threshold_interval(draws, float(levels.min()),
                                                    float(levels.max())))


def one_run(job: tuple[str, float, int, int]) -> dict[str, Outcome]:
    """All variants on one simulated data set."""
    design, beta, seed, resamples = job
    levels = designs()[design]
    rng = np.random.default_rng([seed, int(beta * 10), list(designs()).index(design)])
    k = rng.binomial(TRIALS, [psi(v, ALPHA, beta, GUESS, LAPSE) for v in levels])
    with threadpool_limits(limits=1, user_api="blas"):  # as `fit` does
        return {v: fit_variant(v, levels, k, resamples, seed) for v in VARIANTS}


@dataclass(frozen=True)
class Cell:
    """Summary of one variant over the runs of one design and β (MC: Monte Carlo error)."""

    runs: int
    reached: int
    median_error: float
    median_error_mc: float
    median_abs_error: float
    median_abs_error_mc: float
    coverage: float
    coverage_mc: float
    median_width: float
    median_width_mc: float


def summarise(outcomes: list[Outcome], true: float, seed: int = 0) -> Cell:
    """Per-cell figures, with bootstrap-over-runs Monte Carlo errors of the medians."""
    reached = [o for o in outcomes if o.threshold is not None and o.interval is not None]
    errors = np.array([o.threshold / true - 1 for o in reached])  # type: ignore[operator]
    widths = np.array([(o.interval[1] - o.interval[0]) / true for o in reached])  # type: ignore[index]
    covered = np.array([o.interval[0] <= true <= o.interval[1] for o in reached]  # type: ignore[index]
                       + [False] * (len(outcomes) - len(reached)), dtype=float)
    rng = np.random.default_rng(seed)

    def median_mc(values: np.ndarray) -> tuple[float, float]:
        if not len(values):
            return math.nan, math.nan
        middle = float(np.median(values))
        again = np.median(rng.choice(values, (MC_RESAMPLES, len(values))), axis=1)
        spread = float(np.std(again[np.isfinite(again)])) if np.isfinite(again).all() \
            else math.inf
        return middle, spread

    share = float(covered.mean()) if len(covered) else math.nan
    return Cell(len(outcomes), len(reached), *median_mc(errors), *median_mc(np.abs(errors)),
                share, math.sqrt(share * (1 - share) / max(len(covered), 1)),
                *median_mc(widths))


def true_threshold(beta: float) -> float:
    level = criterion_level(pf.CRITERION, ALPHA, beta, GUESS, LAPSE)
    assert level is not None
    return level


def measure(runs: int, resamples: int, workers: int) -> list[tuple[str, float, str, Cell]]:
    """Every cell: (design, β, variant, summary)."""
    jobs = [(d, b, s, resamples) for d in designs() for b in BETAS for s in range(runs)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(one_run, jobs, chunksize=8))
    else:
        results = [one_run(job) for job in jobs]
    cells = []
    for d in designs():
        for b in BETAS:
            done = [r for (dd, bb, _, _), r in zip(jobs, results, strict=True)
                    if dd == d and bb == b]
            for v in VARIANTS:
                cells.append((d, b, v, summarise([r[v] for r in done], true_threshold(b))))
    return cells


def _percent(value: float, mc: float, signed: bool = False) -> str:
    if not math.isfinite(value):
        return "open"
    body = f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"
    return f"{body} ± {100 * mc:.1f}%" if math.isfinite(mc) else f"{body}% (± open)"


def table(cells: list[tuple[str, float, str, Cell]]) -> list[str]:
    lines = ["| levels (β bound) | β | fit | reached | median error | median abs error "
             "| 95% coverage | median width |", "|---|---|---|---|---|---|---|---|"]
    bounds = {d: width_bound(levels) for d, levels in designs().items()}
    for d, b, v, c in cells:
        lines.append(f"| {d} ({bounds[d]:.2f}) | {b:g} | {v} | {c.reached}/{c.runs} | "
                     f"{_percent(c.median_error, c.median_error_mc, True)} | "
                     f"{_percent(c.median_abs_error, c.median_abs_error_mc)} | "
                     f"{_percent(c.coverage, c.coverage_mc)} | "
                     f"{_percent(c.median_width, c.median_width_mc)} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    for line in table(measure(args.runs, args.resamples, args.workers)):
        print(line, flush=True)


if __name__ == "__main__":
    main()
