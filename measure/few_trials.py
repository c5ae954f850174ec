"""Threshold intervals with many levels and few trials each: coverage of the true threshold
by visioneval's 95% interval (the parametric binomial bootstrap, Wichmann & Hill 2001, II)
and by candidate intervals from the same refits, at designs of about 160 trials spread
over 8 to 24 levels, and at 8 x 10 and 24 x 14.

The observer is measure/overdispersion.py's at τ = 0: the loopback's default orientation
curve (Weibull α = 8, β = 3, λ = 0.02, γ = 1/3 for three alternatives), binomial counts.
The levels are log-spaced over the default orientation levels' range (0.5 to 45 degrees),
as `visioneval data synth-psychophysics` spaces them. Each run is fitted as
`visioneval psychophysics` fits it (`threshold_draws`: the fit of `fit` and its
parametric-bootstrap refits), and the intervals are, each 95%, an end outside the tested
levels open (an open end counts as infinite; a fit that is not reached covers nothing):

- percentile: `threshold_interval` of the converged refits' thresholds, the default;
- basic: the basic bootstrap interval on log threshold, [2 log t̂ − q₀.₉₇₅, 2 log t̂ − q₀.₀₂₅]
  of the refits' log thresholds (Davison & Hinkley 1997, section 5.2): the refits' shift
  from the fit taken as the fit's shift from the truth;
- BC: the bias-corrected percentile interval (Efron 1987): percentiles Φ(2z₀ ± 1.96), z₀
  = Φ⁻¹(share of refit thresholds below the fitted one);
- BCa: BC with Efron's acceleration from a jackknife over trials (deleting one right or one
  wrong answer at a level: 2 x levels refits, weighted by their counts);
- studentized: the bootstrap-t interval on log threshold (Davison & Hinkley 1997, section
  5.2.1), each refit's standard error by the delta method from its Fisher information.

A refit that did not converge is left out, as `threshold_draws` leaves it out; the share of
them is in the table, so whether counting them as open ends would matter can be read there.

Per design also the median relative error of the fitted threshold and of log β over the
true one, the share of runs whose interval misses below (interval above the truth) and
above, and the share of refits that did not converge.

    uv run python measure/few_trials.py --runs 400 --resamples 400
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from visioneval.benchmarks.psychophysics.dataset import DEFAULT_LEVELS
from visioneval.loopback.observer import DEFAULT_CURVES, parse_curves
from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stats.psychometric_fit import (
    _criterion_levels,
    _prepare,
    _probabilities,
    _refit_all,
    _score,
    _simulate,
    fit,
    threshold_interval,
)

GUESS = 1 / 3
CRITERION = 0.75
FEATURE = "orientation"
DESIGNS = ((8, 20), (12, 13), (16, 10), (24, 7), (8, 10), (24, 14))  # levels x trials
METHODS = ("percentile", "basic", "BC", "BCa", "studentized")
Z = float(norm.ppf(0.975))


def levels_of(count: int) -> np.ndarray:
    """`count` levels log-spaced over the default orientation levels' range, rounded to
    three significant digits as the dataset's are."""
    low, high = DEFAULT_LEVELS[FEATURE][0], DEFAULT_LEVELS[FEATURE][-1]
    return np.asarray([float(f"{v:.3g}") for v in np.geomspace(low, high, count)])


def observer() -> tuple[float, float, float]:
    curve = parse_curves(DEFAULT_CURVES)[FEATURE]
    return curve.alpha, curve.beta, curve.lapse


def true_threshold() -> float:
    alpha, beta, lapse = observer()
    found = criterion_level(CRITERION, alpha, beta, GUESS, lapse)
    assert found is not None
    return found


@dataclass(frozen=True)
class Outcome:
    """One run: reached, the fitted threshold and β, per method the interval, and the
    share of refits that did not converge."""

    reached: bool
    threshold: float
    beta: float
    intervals: tuple[tuple[float, float], ...]
    not_converged: float


def _ends(low: float, high: float, lowest: float, highest: float) -> tuple[float, float]:
    """An end outside the tested levels open, as `threshold_interval` opens it."""
    return (low if low >= lowest else -math.inf, high if high <= highest else math.inf)


def _basic(draws: np.ndarray, center: float, lowest: float, highest: float
           ) -> tuple[float, float]:
    """[2 log t̂ − q₀.₉₇₅, 2 log t̂ − q₀.₀₂₅] of the log thresholds (an unreached refit is an
    infinite draw, so its end opens)."""
    low, high = np.quantile(np.log(draws), [0.025, 0.975], method="inverted_cdf")
    return _ends(math.exp(2 * math.log(center) - high), math.exp(2 * math.log(center) - low),
                 lowest, highest)


def log_threshold_se(thetas: np.ndarray, data: object) -> np.ndarray:
    """The delta-method standard error of log threshold per row of parameters (a, log β, λ),
    from the expected information; inf where the criterion is not reached."""
    _, _, information = _score(thetas, data, np.zeros((len(thetas), len(data.t))))  # type: ignore[attr-defined]
    a, beta, lapse = thetas[:, 0], np.exp(thetas[:, 1]), thetas[:, 2]
    f = (CRITERION - GUESS) / (1 - GUESS - lapse)
    inside = (f > 0) & (f < 1)
    f = np.where(inside, f, 0.5)
    minus_log = -np.log1p(-f)
    gradient = np.stack([np.ones_like(a), -np.log(minus_log) / beta,
                         f / ((1 - GUESS - lapse) * (1 - f) * minus_log * beta)], axis=-1)
    covariance = np.linalg.pinv(information)
    variance = np.einsum("ri,rij,rj->r", gradient, covariance, gradient)
    return np.where(inside & (variance > 0), np.sqrt(np.maximum(variance, 0)), math.inf)


def _studentized(draws: np.ndarray, draw_se: np.ndarray, center: float, se: float,
                 lowest: float, highest: float) -> tuple[float, float]:
    """log t̂ − t*₀.₉₇₅·se to log t̂ − t*₀.₀₂₅·se, t* = (log t* − log t̂)/se* per refit."""
    with np.errstate(invalid="ignore"):
        t = np.where(np.isfinite(draws), (np.log(draws) - math.log(center)) / draw_se,
                     math.inf)
    t = np.where(np.isnan(t), math.inf, t)
    low, high = np.quantile(t, [0.025, 0.975], method="inverted_cdf")
    return _ends(math.exp(math.log(center) - high * se), math.exp(math.log(center) - low * se),
                 lowest, highest)


def _corrected(draws: np.ndarray, center: float, acceleration: float, lowest: float,
               highest: float) -> tuple[float, float]:
    """Efron's BCa percentiles (BC when `acceleration` is 0), ends open as the
    percentile interval's."""
    below = float((draws < center).mean() + 0.5 * (draws == center).mean())
    z0 = float(norm.ppf(min(max(below, 0.5 / len(draws)), 1 - 0.5 / len(draws))))
    ends = []
    for z in (-Z, Z):
        shifted = z0 + (z0 + z) / (1 - acceleration * (z0 + z))
        ends.append(float(norm.cdf(shifted)))
    low, high = np.quantile(draws, ends, method="inverted_cdf")
    return (float(low) if low >= lowest else -math.inf,
            float(high) if high <= highest else math.inf)


def acceleration(levels: np.ndarray, k: np.ndarray, n: np.ndarray, theta: np.ndarray
                 ) -> float:
    """Efron's acceleration â = Σ w·d³ / (6 (Σ w·d²)^1.5) from the jackknife of log
    threshold over trials: for each level, one right answer deleted (weight k) and one
    wrong answer deleted (weight n − k), refitted from the fit."""
    thetas, weights = [], []
    for i in range(len(levels)):
        for right, weight in ((1.0, k[i]), (0.0, n[i] - k[i])):
            if weight <= 0:
                continue
            counts, trials = k.astype(np.float64).copy(), n.astype(np.float64).copy()
            counts[i] -= right
            trials[i] -= 1
            kept = trials > 0  # a level of one trial leaves with it
            data = _prepare(levels[kept], counts[kept], trials[kept], GUESS, "weibull",
                            CRITERION, (0.0, 0.1))
            found, _ = _refit_all(data, counts[kept][None, :], theta)
            thetas.append(_criterion_levels(found, CRITERION, data)[0])
            weights.append(weight)
    values = np.log(np.asarray(thetas))
    w = np.asarray(weights, dtype=np.float64)
    if not np.isfinite(values).all():
        return 0.0
    d = (w * values).sum() / w.sum() - values
    denominator = 6 * ((w * d ** 2).sum()) ** 1.5
    return float((w * d ** 3).sum() / denominator) if denominator > 0 else 0.0


def one_run(args: tuple[int, int, int, int]) -> Outcome:
    """One simulated run, fitted and resampled as `threshold_draws` does it (the fit of
    `fit`, binomial counts from it with the same random numbers, `_refit_all`), the refits'
    parameters kept for the standard errors."""
    count, trials, seed, resamples = args
    levels = levels_of(count)
    alpha, beta, lapse = observer()
    p = np.asarray([psi(v, alpha, beta, GUESS, lapse) for v in levels])
    k = np.random.default_rng([seed, count, trials]).binomial(trials, p)
    n = np.full(count, trials)
    found = fit(levels, k, n, GUESS, resamples=0)
    nones = ((-math.inf, math.inf),) * len(METHODS)
    if found.threshold is None:
        return Outcome(False, math.nan, found.beta, nones, math.nan)
    data = _prepare(levels, k, n, GUESS, "weibull", CRITERION, (0.0, 0.1))
    theta = np.array([math.log(found.alpha), math.log(found.beta), found.lapse])
    counts = _simulate(np.random.default_rng(seed), data, _probabilities(theta, data)[0],
                       resamples, None)
    thetas, converged = _refit_all(data, counts.astype(np.float64), theta)
    thetas = thetas[converged]
    t = _criterion_levels(thetas, CRITERION, data)
    lowest, highest = float(levels.min()), float(levels.max())
    se = float(log_threshold_se(theta[None, :], data)[0])
    accel = acceleration(levels, k, n, theta)
    intervals = (threshold_interval(t, lowest, highest),
                 _basic(t, found.threshold, lowest, highest),
                 _corrected(t, found.threshold, 0.0, lowest, highest),
                 _corrected(t, found.threshold, accel, lowest, highest),
                 _studentized(t, log_threshold_se(thetas, data), found.threshold, se,
                              lowest, highest))
    return Outcome(True, found.threshold, found.beta, intervals, 1 - len(t) / resamples)


@dataclass(frozen=True)
class Cell:
    levels: int
    trials: int
    runs: int
    reached: int
    coverage: tuple[float, ...]
    width: tuple[float, ...]
    width_se: tuple[float, ...]
    miss_low: float  # percentile interval above the truth
    miss_high: float  # percentile interval below the truth
    error: float
    error_se: float
    beta_error: float
    not_converged: float


def summarise(count: int, trials: int, outcomes: list[Outcome]) -> Cell:
    true = true_threshold()
    _, beta, _ = observer()
    rng = np.random.default_rng(0)
    done = [o for o in outcomes if o.reached]
    coverage, width, width_se = [], [], []
    for i in range(len(METHODS)):
        coverage.append(float(np.mean([o.reached and o.intervals[i][0] <= true
                                       <= o.intervals[i][1] for o in outcomes])))
        w = np.asarray([(o.intervals[i][1] - o.intervals[i][0]) / true for o in done])
        width.append(float(np.median(w)))
        medians = [np.median(rng.choice(w, len(w))) for _ in range(200)]
        finite = [m for m in medians if np.isfinite(m)]
        width_se.append(float(np.std(finite)) if len(finite) > 1 else math.nan)
    errors = np.asarray([o.threshold / true - 1 for o in done])
    boot = [np.median(rng.choice(errors, len(errors))) for _ in range(200)]
    return Cell(count, trials, len(outcomes), len(done), tuple(coverage), tuple(width),
                tuple(width_se),
                float(np.mean([o.reached and o.intervals[0][0] > true for o in outcomes])),
                float(np.mean([o.reached and o.intervals[0][1] < true for o in outcomes])),
                float(np.median(errors)), float(np.std(boot)),
                float(np.median([math.log(o.beta / beta) for o in done])),
                float(np.mean([o.not_converged for o in done])))


def row(cell: Cell) -> str:
    runs = cell.runs
    parts = [f"| {cell.levels} x {cell.trials} | {cell.reached}/{runs} |"]
    for c in cell.coverage:
        low = " **<93%**" if c < 0.93 else ""
        parts.append(f" {100 * c:.1f} ± {100 * math.sqrt(c * (1 - c) / runs):.1f}%{low} |")
    for w, se in zip(cell.width, cell.width_se, strict=True):
        parts.append(f" {100 * w:.0f} ± {100 * se:.0f}% |")
    parts.append(f" {100 * cell.miss_low:.1f}% | {100 * cell.miss_high:.1f}% |"
                 f" {100 * cell.error:+.1f} ± {100 * cell.error_se:.1f}% |"
                 f" {math.exp(cell.beta_error):.2f} | {100 * cell.not_converged:.1f}% |")
    return "".join(parts)


def header() -> str:
    names = " | ".join(f"coverage, {m}" for m in METHODS)
    widths = " | ".join(f"width, {m}" for m in METHODS)
    columns = 2 + 2 * len(METHODS) + 5
    return (f"| levels x trials | reached | {names} | {widths} | misses low | misses high "
            "| median error | median β̂/β | refits not converged |\n" + "|---" * columns + "|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--designs", nargs="+", default=[f"{a}x{b}" for a, b in DESIGNS],
                        help="levels x trials per level, e.g. 24x7")
    args = parser.parse_args()
    alpha, beta, lapse = observer()
    print(f"{FEATURE}: α={alpha:g} β={beta:g} λ={lapse:g} γ={GUESS:.3g}, true threshold "
          f"{true_threshold():.4g}; {args.runs} runs, {args.resamples} refits; widths over "
          "the true threshold")
    print(header())
    with ProcessPoolExecutor(args.workers) as pool:
        for design in args.designs:
            count, trials = (int(v) for v in design.split("x"))
            jobs = [(count, trials, seed, args.resamples) for seed in range(args.runs)]
            outcomes = list(pool.map(one_run, jobs, chunksize=8))
            print(row(summarise(count, trials, outcomes)), flush=True)


if __name__ == "__main__":
    main()
