"""Maximum-likelihood fits of the psychometric function to binomial counts per level, with
parametric-bootstrap intervals (Wichmann & Hill 2001, I and II).

The guess rate γ is fixed by the task; α, β and the lapse rate λ (bounded) are fitted. The
sigmoid is written once for both forms as F = g(β·(t − a)) on a transformed level t: the
Weibull is the Gumbel g(u) = 1 − exp(−eᵘ) on t = log x with a = log α, the logistic is
g(u) = 1/(1 + e⁻ᵘ) on t = x with a = α. One likelihood and one gradient serve both.

The bootstrap simulates binomial counts at the tested levels from the fit, refits each from
the fit's own parameters (a warm start), and takes percentile intervals; the deviance's p is
the share of resampled deviances at least as large as the observed one (Wichmann & Hill
2001, I, section 3). `threshold_draws` keeps those thresholds one per resample, so that two
independent fits' draws can be paired (a difference between observers); it refits every
simulated data set at once with Newton's method (see `_refit_all`). `bridged_interval`
widens the threshold's interval by bootstraps simulated from curves near the fit as well
(the bootstrap bridging of Wichmann & Hill 2001, II), for designs whose percentile interval
covers too little.

The counts at a level can vary more than a binomial count (a model answering a pool of
stimuli is not one binomial observer). The fit's lack of fit measures it: the dispersion
φ = Pearson X² / (levels − free parameters), the quasi-binomial scale (McCullagh & Nelder
1989, section 4.5; Finney's heterogeneity factor in probit analysis), with the p of X² on
those degrees of freedom. With `dispersion="fitted"` the bootstrap simulates overdispersed
counts: where φ > 1 a level's proportion is Beta with mean ψ and variance
η²ψ(1 − ψ), η² = (φ − 1)/(n − 1) (psignifit 4's beta-binomial, Schütt et al. 2016), so a
count's variance is φ times the binomial one, and the thresholds are spread about the fit's
by t(0.975, df)/z(0.975), the t reference of an estimated scale (the slope and lapse
intervals and the deviance's p come from the same refits, unspread). docs/psychophysics.md
measures both intervals.

A threshold interval never extrapolates either: an end outside the tested levels is open,
−math.inf below the lowest tested level and math.inf beyond the highest (or where refits
never reach the criterion); `open_ends` turns them into None for metrics.json.

"Not reached" (no threshold number, never an extrapolation), in this order:
1. the fit does not beat the flat guessing model ψ(x) = γ: a likelihood-ratio test on
   3 degrees of freedom (α, β, λ) with p ≥ 0.05;
2. the fitted ceiling 1 − λ is at or below the criterion;
3. the level where ψ equals the criterion lies outside [lowest, highest tested level].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from visioneval.stats.psychometric import Sigmoid, criterion_level, psi_slope, sigmoid_inverse

Status = Literal["reached", "not reached"]
Dispersion = Literal["binomial", "fitted"]
CRITERION = 0.75
LAPSE_BOUNDS = (0.0, 0.1)
RESAMPLES = 1000
BRIDGES = (0.25, 0.75)  # bootstrap-threshold quantiles whose refits `bridged_interval` also
# simulates from
SEED = 20261122
CHANCE_P = 0.05  # the likelihood-ratio test against guessing, rule 1
OVERDISPERSED_P = 0.05  # X² beyond this says the answers vary more than binomial
# The designs whose 95% threshold interval held 93-97% (measure/few_trials.py, 1000 runs a
# design; docs/psychophysics.md, "With few trials per level"): at most 8 levels of at least 10
# trials each (8x20: 94.3%, 8x10: 94.2%); more levels or fewer trials a level covered
# 89.4-92.9% (24x7: 89.4%, 16x10: 92.1%, 24x14: 92.3%, 12x13: 92.8%).
HOLDING_TRIALS_PER_LEVEL = 10
HOLDING_LEVELS = 8
_EPS = 1e-9
# F's rise from 0.05 to 0.95 is _RISE / β (in log level for the Weibull, level for the logistic)
_RISE = {"weibull": math.log(-math.log(0.05)) - math.log(-math.log(0.95)),
         "logistic": 2 * math.log(19.0)}
WIDTH_STEPS = 2.0  # the narrowest rise, in smallest steps between tested levels
STARTS = 4  # optimiser starts of different slopes for the fit of the observed counts
_WEIBULL_BETA = (0.3, 30.0)  # β of the Weibull: unit-free (a slope in log level)
_LOGISTIC_BETA = (0.5, 200.0)  # β·(highest − lowest level) of the logistic


@dataclass(frozen=True)
class Fit:
    """One psychometric fit. `threshold` is the level where ψ equals `criterion` (a
    proportion correct, through γ and λ); `midpoint` the level where F = 0.5; `slope` dψ/dx
    at the threshold. All three, and the intervals, are None when the status is
    "not reached" (`reason` says why)."""

    form: Sigmoid
    guess: float
    criterion: float
    alpha: float
    beta: float
    lapse: float
    log_likelihood: float  # binomial, without the constant log C(n, k)
    deviance: float  # against the saturated model (one probability per level)
    chance_p: float  # likelihood-ratio test against ψ = γ everywhere
    status: Status
    reason: str | None
    threshold: float | None
    midpoint: float | None
    slope: float | None
    threshold_ci: tuple[float, float] | None = None  # ends may be ±math.inf: `threshold_interval`
    slope_ci: tuple[float, float] | None = None
    lapse_ci: tuple[float, float] | None = None
    deviance_p: float | None = None  # the bootstrap's
    resamples: int = 0  # the bootstrap fits that converged
    dispersion: float | None = None  # Pearson X² / residual df; None without residual df
    dispersion_p: float | None = None  # X² on the residual degrees of freedom

    @property
    def overdispersed(self) -> bool:
        """Whether the lack of fit says the answers vary more than binomial between
        levels (X²'s p below OVERDISPERSED_P)."""
        return self.dispersion_p is not None and self.dispersion_p < OVERDISPERSED_P


@dataclass(frozen=True)
class _Data:
    t: np.ndarray
    k: np.ndarray
    n: np.ndarray
    guess: float
    form: Sigmoid
    bounds: list[tuple[float, float]]


def _g(u: np.ndarray, form: Sigmoid) -> tuple[np.ndarray, np.ndarray]:
    """F and dF/du at u."""
    if form == "weibull":
        eu = np.exp(np.minimum(u, 50.0))
        f = -np.expm1(-eu)
        return f, eu * np.exp(-eu)
    f = 1.0 / (1.0 + np.exp(-np.clip(u, -500.0, 500.0)))
    return f, f * (1.0 - f)


def _probabilities(theta: np.ndarray, data: _Data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ψ per parameter row and level, F, and dF/du (theta rows: a, log β, λ)."""
    a, beta, lapse = theta[..., 0:1], np.exp(theta[..., 1:2]), theta[..., 2:3]
    u = beta * (data.t - a)
    f, df = _g(u, data.form)
    p = data.guess + (1.0 - data.guess - lapse) * f
    return np.clip(p, _EPS, 1.0 - _EPS), f, df


def _log_likelihood(theta: np.ndarray, data: _Data, k: np.ndarray) -> np.ndarray:
    p, _, _ = _probabilities(theta, data)
    return (k * np.log(p) + (data.n - k) * np.log1p(-p)).sum(axis=-1)


def _objective(theta: np.ndarray, data: _Data, k: np.ndarray) -> tuple[float, np.ndarray]:
    """−log L and its gradient, for the optimiser."""
    p, f, df = _probabilities(theta, data)
    a, beta, lapse = theta[0], math.exp(theta[1]), theta[2]
    dl_dp = k / p - (data.n - k) / (1.0 - p)
    scale = (1.0 - data.guess - lapse) * df
    grad = np.array([
        (dl_dp * scale * -beta).sum(),
        (dl_dp * scale * beta * (data.t - a)).sum(),
        (dl_dp * -f).sum(),
    ])
    return -float((k * np.log(p) + (data.n - k) * np.log1p(-p)).sum()), -grad


def _starts(data: _Data, k: np.ndarray, count: int = STARTS) -> np.ndarray:
    """The best grid point at each of the `count` slopes that fit best: starting points of
    different steepness. From one start, a sparse design (levels far apart, so nothing
    bounds the slope between the last level below criterion and the first above it) often
    ends at a too-steep local maximum."""
    grid = _grid(data)
    ll = _log_likelihood(grid, data, k)
    best: dict[float, int] = {}
    for i in np.argsort(-ll, kind="stable"):
        best.setdefault(float(grid[i, 1]), int(i))
    return grid[list(best.values())[:count]]


def _best_fit(data: _Data, k: np.ndarray) -> np.ndarray:
    """The highest of the local maxima reached from `_starts`."""
    found = [_maximise(data, k, start)[0] for start in _starts(data, k)]
    return max(found, key=lambda theta: float(_log_likelihood(theta, data, k)))


def _maximise(data: _Data, k: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, bool]:
    from scipy.optimize import minimize  # keeps `visioneval list` (which loads this) light

    found = minimize(_objective, start, args=(data, k), jac=True, method="L-BFGS-B",
                     bounds=data.bounds, options={"maxiter": 200})
    return found.x, bool(found.success)


def _saturated(data: _Data, k: np.ndarray) -> np.ndarray:
    from scipy.special import xlogy  # keeps `visioneval list` (which loads this) light

    return (xlogy(k, k / data.n) + xlogy(data.n - k, 1.0 - k / data.n)).sum(axis=-1)


def _natural(theta: np.ndarray, form: Sigmoid) -> tuple[float, float, float]:
    """(α, β, λ) from (a, log β, λ)."""
    a, beta = float(theta[0]), math.exp(float(theta[1]))
    return (math.exp(a) if form == "weibull" else a), beta, float(theta[2])


def fit(levels: Sequence[float], n_correct: Sequence[int], n_trials: Sequence[int],
        guess: float, form: Sigmoid = "weibull", criterion: float = CRITERION,
        lapse_bounds: tuple[float, float] = LAPSE_BOUNDS, resamples: int = RESAMPLES,
        seed: int = SEED, dispersion: Dispersion = "binomial") -> Fit:
    """The maximum-likelihood fit of ψ to `n_correct` of `n_trials` at each level, with
    `resamples` parametric-bootstrap refits for the intervals (0: none), simulated as
    binomial counts or (`dispersion="fitted"`) as counts as dispersed as the fit's lack of
    fit says. Levels must be positive for the Weibull.

    BLAS runs on one thread meanwhile: a fit is thousands of tiny optimisations, and
    OpenBLAS's worker threads spinning for cores a busy process needs made a 1000-resample
    summary of three features take 95 s instead of 3 s on the 2-core machine under load
    (docs/PERFORMANCE.md)."""
    # scipy's own OpenBLAS is loaded with scipy.optimize: before the limit, which holds only
    # the libraries loaded when it is set.
    import scipy.optimize  # noqa: F401
    import scipy.stats  # noqa: F401
    from threadpoolctl import threadpool_limits  # keeps `visioneval list` (which loads this) light

    with threadpool_limits(limits=1, user_api="blas"):
        return _fit(levels, n_correct, n_trials, guess, form, criterion, lapse_bounds,
                    resamples, seed, dispersion)


def _fit(levels: Sequence[float], n_correct: Sequence[int], n_trials: Sequence[int],
         guess: float, form: Sigmoid, criterion: float, lapse_bounds: tuple[float, float],
         resamples: int, seed: int, dispersion: Dispersion) -> Fit:
    from scipy.stats import chi2  # keeps `visioneval list` (which loads this) light

    data = _prepare(levels, n_correct, n_trials, guess, form, criterion, lapse_bounds)
    x, k, n = np.asarray(levels, dtype=np.float64), data.k, data.n
    theta = _best_fit(data, k)
    log_l = float(_log_likelihood(theta, data, k))
    deviance = float(2.0 * (_saturated(data, k) - log_l))
    chance = float((k * math.log(guess) + (n - k) * math.log1p(-guess)).sum())
    chance_p = float(chi2.sf(max(0.0, 2.0 * (log_l - chance)), df=3))
    alpha, beta, lapse = _natural(theta, form)
    status, reason, threshold = _judge(alpha, beta, lapse, guess, form, criterion, chance_p,
                                       float(x.min()), float(x.max()))
    phi, phi_p = _dispersion(data, theta)
    out = Fit(form, guess, criterion, alpha, beta, lapse, log_l, deviance, chance_p, status,
              reason, threshold, None, None, dispersion=phi, dispersion_p=phi_p)
    if threshold is not None:
        mid = sigmoid_inverse(0.5, alpha, beta, form)
        out = _replace(out, midpoint=mid if x.min() <= mid <= x.max() else None,
                       slope=psi_slope(threshold, alpha, beta, guess, lapse, form))
    if resamples > 0:
        out = _bootstrap(out, data, theta, deviance, resamples, seed, dispersion)
    return out


def _free_parameters(data: _Data) -> int:
    """α and β, and λ unless its bounds fix it."""
    low, high = data.bounds[2]
    return 2 + int(low < high)


def _dispersion(data: _Data, theta: np.ndarray) -> tuple[float | None, float | None]:
    """φ = Pearson X² / (levels − free parameters) and the p of X² on those degrees of
    freedom; (None, None) when no degree of freedom is left."""
    from scipy.stats import chi2  # keeps `visioneval list` (which loads this) light

    df = len(data.t) - _free_parameters(data)
    if df <= 0:
        return None, None
    p, _, _ = _probabilities(theta, data)
    x2 = float(((data.k - data.n * p) ** 2 / (data.n * p * (1.0 - p))).sum())
    return x2 / df, float(chi2.sf(x2, df))


def _simulate(rng: np.random.Generator, data: _Data, p: np.ndarray, resamples: int,
              phi: float | None) -> np.ndarray:
    """Counts at the tested levels, `resamples` rows: binomial, or where φ > 1
    beta-binomial with a count's variance φ times the binomial one (η² = (φ − 1)/(n − 1),
    at most 0.95, so a level's proportion stays a proper Beta)."""
    n = data.n.astype(np.int64)
    shape = (resamples, len(data.t))
    if phi is None or phi <= 1.0:
        return rng.binomial(n, p, size=shape)
    eta2 = np.where(data.n > 1, np.minimum((phi - 1.0) / np.maximum(data.n - 1.0, 1.0), 0.95),
                    0.0)
    v = np.where(eta2 > 0, 1.0 / np.maximum(eta2, 1e-12) - 1.0, 1.0)
    proportions = np.where(eta2 > 0, rng.beta(p * v, (1.0 - p) * v, size=shape), p)
    return rng.binomial(n, proportions)


def _t_factor(data: _Data, phi: float | None) -> float:
    """t(0.975, df)/z(0.975) where φ > 1 and was estimated on df degrees of freedom: how
    much farther the ends of an interval go when the scale is estimated; 1 otherwise."""
    from scipy.stats import norm, t  # keeps `visioneval list` (which loads this) light

    if phi is None or phi <= 1.0:
        return 1.0
    df = len(data.t) - _free_parameters(data)
    return float(t.ppf(0.975, df) / norm.ppf(0.975))


def _spread(draws: np.ndarray, center: float, factor: float, form: Sigmoid) -> np.ndarray:
    """Threshold draws moved `factor` times as far from `center` (in log level for the
    Weibull, whose levels are positive); a draw that never reaches the criterion stays."""
    if factor == 1.0:
        return draws
    finite = np.isfinite(draws)
    safe = np.where(finite, draws, center)
    if form == "weibull":
        moved = center * np.exp(factor * np.log(safe / center))
    else:
        moved = center + factor * (safe - center)
    return np.where(finite, moved, draws)


def _prepare(levels: Sequence[float], n_correct: Sequence[int], n_trials: Sequence[int],
             guess: float, form: Sigmoid, criterion: float,
             lapse_bounds: tuple[float, float]) -> _Data:
    """The counts as arrays on the transformed level t, with the parameters' bounds."""
    x = np.asarray(levels, dtype=np.float64)
    k = np.asarray(n_correct, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    _check(x, k, n, guess, form, criterion, lapse_bounds)
    t = np.log(x) if form == "weibull" else x
    span = float(t.max() - t.min()) or 1.0
    low, high = _WEIBULL_BETA if form == "weibull" else tuple(b / span for b in _LOGISTIC_BETA)
    # The rise of F from 0.05 to 0.95 is at least the smallest step between tested levels
    # (psignifit 4's assumption about the width, Schütt et al. 2016): the data cannot tell
    # a steeper function from a step between two levels, and a fit that steep gives too
    # narrow a bootstrap interval.
    steps = np.diff(np.unique(t))
    if len(steps):
        high = max(low, min(high, _RISE[form] / (WIDTH_STEPS * float(steps.min()))))
    bounds = [(float(t.min()) - 3 * span, float(t.max()) + 3 * span),
              (math.log(low), math.log(high)), lapse_bounds]
    return _Data(t, k, n, guess, form, bounds)


def _check(x: np.ndarray, k: np.ndarray, n: np.ndarray, guess: float, form: Sigmoid,
           criterion: float, lapse_bounds: tuple[float, float]) -> None:
    """One clear line for input a fit cannot use."""
    if not len(x) == len(k) == len(n) or len(x) < 2:
        raise ValueError(f"levels, n_correct and n_trials need one value per level (at least "
                         f"2): got {len(x)}, {len(k)} and {len(n)}")
    if (n <= 0).any() or (k < 0).any() or (k > n).any():
        raise ValueError("each level needs n_trials > 0 and 0 <= n_correct <= n_trials")
    if form == "weibull" and (x <= 0).any():
        raise ValueError("the Weibull needs positive levels (a level of 0 or less was given)")
    if not 0.0 <= guess < criterion < 1.0:
        raise ValueError(f"the criterion {criterion} must lie between the guess rate {guess} "
                         "and 1")
    if not 0.0 <= lapse_bounds[0] <= lapse_bounds[1] < 1.0 - guess:
        raise ValueError(f"lapse bounds {lapse_bounds} must satisfy 0 <= low <= high < 1 - "
                         "guess rate")


def _judge(alpha: float, beta: float, lapse: float, guess: float, form: Sigmoid,
           criterion: float, chance_p: float, low: float, high: float
           ) -> tuple[Status, str | None, float | None]:
    """The not-reached rule of the module docstring."""
    if chance_p >= CHANCE_P:
        return ("not reached", f"the answers do not differ from guessing ({guess:.3g}) over "
                f"the tested levels (likelihood-ratio p = {chance_p:.3g})", None)
    level = criterion_level(criterion, alpha, beta, guess, lapse, form)
    if level is None:
        return ("not reached", f"the fitted ceiling 1 - lapse = {1 - lapse:.3g} does not "
                f"exceed the criterion {criterion:g}", None)
    if level > high:
        return ("not reached", f"proportion correct {criterion:g} is not reached by the "
                f"highest tested level {high:g}", None)
    if level < low:
        return ("not reached", f"proportion correct is above {criterion:g} already at the "
                f"lowest tested level {low:g}", None)
    return "reached", None, level


def _replace(found: Fit, **changes: object) -> Fit:
    return replace(found, **changes)  # type: ignore[arg-type]


def _bootstrap(found: Fit, data: _Data, theta: np.ndarray, deviance: float, resamples: int,
               seed: int, dispersion: Dispersion) -> Fit:
    """Refit `resamples` data sets simulated from the fit at the tested levels: binomial,
    or with `dispersion="fitted"` as dispersed as the fit's φ (`_simulate`, `_t_factor`)."""
    rng = np.random.default_rng(seed)
    p, _, _ = _probabilities(theta, data)
    phi = found.dispersion if dispersion == "fitted" else None
    counts = _simulate(rng, data, p, resamples, phi)
    thetas, deviances = [], []
    for k in counts.astype(np.float64):
        refit, ok = _maximise(data, k, theta)
        if not ok:
            continue
        thetas.append(refit)
        deviances.append(2.0 * (_saturated(data, k) - _log_likelihood(refit, data, k)))
    done = len(thetas)
    if done == 0:
        return found
    dev = np.asarray(deviances, dtype=np.float64)
    lapses = np.asarray([t[2] for t in thetas])
    changes: dict[str, object] = {
        "deviance_p": float((dev >= deviance - 1e-9).mean()),
        "lapse_ci": _percentiles(lapses), "resamples": done}
    if found.threshold is not None:
        levels, slopes = [], []
        for refit in thetas:
            alpha, beta, lapse = _natural(refit, data.form)
            level = criterion_level(found.criterion, alpha, beta, data.guess, lapse, data.form)
            levels.append(math.inf if level is None else level)
            slopes.append(0.0 if level is None else
                          psi_slope(level, alpha, beta, data.guess, lapse, data.form))
        draws = _spread(np.asarray(levels), found.threshold, _t_factor(data, phi), data.form)
        changes["threshold_ci"] = threshold_interval(draws, *_tested(data))
        changes["slope_ci"] = _percentiles(np.asarray(slopes))
    return _replace(found, **changes)


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles, without interpolating across an infinite value
    (a resample that never reaches the criterion counts as a threshold beyond any level)."""
    low, high = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)


def threshold_interval(draws: np.ndarray, lowest: float, highest: float
                       ) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap thresholds, with an end outside the tested
    levels [lowest, highest] open: −math.inf ("below the tested levels") or math.inf
    ("beyond the tested levels"). The levels are magnitudes, so a number below the lowest
    tested one (even a negative one, which a logistic refit can give) is an extrapolation
    the data cannot support."""
    low, high = _percentiles(draws)
    return (low if low >= lowest else -math.inf, high if high <= highest else math.inf)


def open_ends(interval: tuple[float, float]) -> tuple[float | None, float | None]:
    """A threshold interval as metrics.json stores it: an open (infinite) end is None."""
    low, high = interval
    return (None if math.isinf(low) else low, None if math.isinf(high) else high)


def _tested(data: _Data) -> tuple[float, float]:
    """The lowest and highest tested level, in the level's own units."""
    low, high = float(data.t.min()), float(data.t.max())
    return (math.exp(low), math.exp(high)) if data.form == "weibull" else (low, high)


@dataclass(frozen=True)
class ThresholdDraws:
    """A fit and its parametric-bootstrap thresholds, kept one per resample so that draws of
    independent fits can be combined (a difference of two observers' thresholds). Each
    draw is where the refit's ψ reaches the criterion, as in `fit`'s interval; math.inf
    where the refit's ceiling 1 − λ stays at or below it. Empty when the fit has no
    threshold or no resample was asked."""

    fit: Fit
    thresholds: np.ndarray  # one per converged refit
    resamples: int  # asked for; len(thresholds) converged

    @property
    def not_reached(self) -> int:
        """Refits whose ψ never reaches the criterion (their draw is math.inf)."""
        return int(np.isinf(self.thresholds).sum())


def threshold_draws(levels: Sequence[float], n_correct: Sequence[int],
                    n_trials: Sequence[int], guess: float, form: Sigmoid = "weibull",
                    criterion: float = CRITERION,
                    lapse_bounds: tuple[float, float] = LAPSE_BOUNDS,
                    resamples: int = RESAMPLES, seed: int = SEED,
                    dispersion: Dispersion = "binomial") -> ThresholdDraws:
    """The maximum-likelihood fit of `fit` (without its intervals) and the thresholds of
    `resamples` parametric-bootstrap refits, simulated as `fit`'s bootstrap simulates
    them (binomial, or as dispersed as the fit's φ with `dispersion="fitted"`). The refits
    are made all at once (`_refit_all`: array arithmetic, no optimiser call and no BLAS
    call per resample), several times faster than `fit`'s bootstrap and unaffected by BLAS
    threads; their maxima are at least as high as its."""
    found = fit(levels, n_correct, n_trials, guess, form, criterion, lapse_bounds,
                resamples=0)
    if found.threshold is None or resamples <= 0:
        return ThresholdDraws(found, np.empty(0), max(resamples, 0))
    data = _prepare(levels, n_correct, n_trials, guess, form, criterion, lapse_bounds)
    phi = found.dispersion if dispersion == "fitted" else None
    _, draws = _resampled(data, _theta(found), criterion, resamples, seed, phi)
    return ThresholdDraws(found, _spread(draws, found.threshold, _t_factor(data, phi), form),
                          resamples)


def bridged_interval(levels: Sequence[float], n_correct: Sequence[int],
                     n_trials: Sequence[int], guess: float, form: Sigmoid = "weibull",
                     criterion: float = CRITERION,
                     lapse_bounds: tuple[float, float] = LAPSE_BOUNDS,
                     resamples: int = RESAMPLES, seed: int = SEED,
                     bridges: Sequence[float] = BRIDGES
                     ) -> tuple[ThresholdDraws, tuple[float, float] | None]:
    """`threshold_draws` (binomial) and the threshold's 95% interval widened by bootstrap
    bridging: the percentile interval leans on the bootstrap's curve being the observer's
    (Wichmann & Hill 2001, II, "the bootstrap bridging assumption"), and with few trials a
    fit steeper than the observer gives too short an interval. So the refits whose
    thresholds lie at the `bridges` quantiles of the draws each generate a bootstrap of
    their own, and the interval runs from the lowest of the intervals' lower ends to the
    highest upper end (open ends as `threshold_interval`). None without a threshold."""
    found = fit(levels, n_correct, n_trials, guess, form, criterion, lapse_bounds,
                resamples=0)
    if found.threshold is None or resamples <= 0:
        return ThresholdDraws(found, np.empty(0), max(resamples, 0)), None
    data = _prepare(levels, n_correct, n_trials, guess, form, criterion, lapse_bounds)
    thetas, draws = _resampled(data, _theta(found), criterion, resamples, seed, None)
    if not len(draws):
        return ThresholdDraws(found, draws, resamples), None
    tested = _tested(data)
    intervals = [threshold_interval(draws, *tested)]
    order = np.argsort(draws)
    for index, quantile in enumerate(bridges, 1):
        at = order[min(int(quantile * len(draws)), len(draws) - 1)]
        if math.isfinite(draws[at]):
            _, near = _resampled(data, thetas[at], criterion, resamples, seed + index, None)
            if len(near):
                intervals.append(threshold_interval(near, *tested))
    return (ThresholdDraws(found, draws, resamples),
            (min(i[0] for i in intervals), max(i[1] for i in intervals)))


def _theta(found: Fit) -> np.ndarray:
    """A fit's parameters as the likelihood takes them: (a, log β, λ)."""
    a = math.log(found.alpha) if found.form == "weibull" else found.alpha
    return np.array([a, math.log(found.beta), found.lapse])


def _resampled(data: _Data, theta: np.ndarray, criterion: float, resamples: int, seed: int,
               phi: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The converged refits of `resamples` data sets simulated from `theta`, and each one's
    threshold (math.inf where it never reaches the criterion)."""
    p, _, _ = _probabilities(theta, data)
    counts = _simulate(np.random.default_rng(seed), data, p, resamples, phi)
    thetas, converged = _refit_all(data, counts.astype(np.float64), theta)
    kept = thetas[converged]
    return kept, _criterion_levels(kept, criterion, data)


_REFIT_ITERATIONS = 200
_GRADIENT_TOLERANCE = 1e-5  # scipy's L-BFGS-B default (pgtol)
_RELATIVE_GAIN = 1e7 * 2.2e-16  # scipy's L-BFGS-B default (factr times the machine eps)


def _refit_all(data: _Data, k: np.ndarray, start: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood refits of every row of counts `k` at once, from several starts:
    `start` (the fit's own parameters, as `_bootstrap` starts) and, per lapse rate of
    `_starts`' grid, the grid's best point for that row (the likelihood can have separate
    maxima with and without lapses); the best converged refit is kept. Returns the
    parameters and, per row, whether any refit converged."""
    rows = len(k)
    grid = _grid(data)
    p = np.clip(_probabilities(grid, data)[0], _EPS, 1.0 - _EPS)
    log_l = np.einsum("rl,gl->rg", k, np.log(p)) + np.einsum("rl,gl->rg", data.n - k,
                                                              np.log1p(-p))
    starts = [np.tile(start, (rows, 1))]
    for lapse in np.unique(grid[:, 2]):
        among = np.flatnonzero(grid[:, 2] == lapse)
        starts.append(grid[among[np.argmax(log_l[:, among], axis=1)]])
    tries = len(starts)
    theta, converged = _ascend(data, np.tile(k, (tries, 1)), np.concatenate(starts))
    found = np.where(converged, _log_likelihood(theta, data, np.tile(k, (tries, 1))),
                     -np.inf).reshape(tries, rows)
    best = np.argmax(found, axis=0)
    kept = theta.reshape(tries, rows, 3)[best, np.arange(rows)]
    reached = np.asarray(converged.reshape(tries, rows).any(axis=0))
    return kept, reached


def _ascend(data: _Data, k: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method with Levenberg-Marquardt damping on every row at once, the
    log-likelihood's own curvature where it is concave and the Fisher information where it
    is not; a step is kept only when the log-likelihood does not fall, and parameters stay
    in their bounds (one at a bound that the gradient pushes beyond is held for that step).
    A row has converged when its projected gradient, or the gain that Newton's step
    promises relative to the log-likelihood, is below scipy's L-BFGS-B defaults."""
    low = np.array([b[0] for b in data.bounds])
    high = np.array([b[1] for b in data.bounds])
    theta = np.clip(theta, low, high)
    log_l = _log_likelihood(theta, data, k)
    damping = np.full(len(k), 1e-4)
    converged = np.zeros(len(k), dtype=bool)
    live = np.arange(len(k))
    for _ in range(_REFIT_ITERATIONS):
        t, kk = theta[live], k[live]
        score, hessian, information = _score(t, data, kk)
        free = ~(((t <= low) & (score < 0)) | ((t >= high) & (score > 0)))
        score = np.where(free, score, 0.0)
        both = free[:, :, None] & free[:, None, :]
        fixed = np.eye(3) * np.where(free, 0.0, 1.0)[:, None, :]
        concave = _positive_definite(np.where(both, -hessian, 0.0) + fixed)
        matrix = np.where(both, np.where(concave[:, None, None], -hessian, information), 0.0)
        newton = _solve3(matrix + fixed, score)
        done = (np.abs(score).max(axis=1) < _GRADIENT_TOLERANCE) | (
            (score * newton).sum(axis=1) / 2 < _RELATIVE_GAIN * np.maximum(
                np.abs(log_l[live]), 1.0))
        diagonal = damping[live, None] * np.abs(np.einsum("rii->ri", matrix)) + 1e-12
        step = _solve3(matrix + fixed + np.eye(3) * np.where(free, diagonal, 0.0)[:, None, :],
                       score)
        candidate = np.clip(t + step, low, high)
        gained = _log_likelihood(candidate, data, kk)
        better = (gained >= log_l[live]) & ~done
        theta[live] = np.where(better[:, None], candidate, t)
        log_l[live] = np.where(better, gained, log_l[live])
        damping[live] = np.where(better, np.maximum(damping[live] / 4, 1e-9),
                                 damping[live] * 8)
        converged[live] = done
        live = live[~done & (damping[live] < 1e12)]
        if not len(live):
            break
    return theta, converged


def _grid(data: _Data) -> np.ndarray:
    """`_starts`' coarse grid over (a, log β, λ), one point a row."""
    (_, _), (b_lo, b_hi), (l_lo, l_hi) = data.bounds
    span_lo, span_hi = float(data.t.min()), float(data.t.max())
    a = np.linspace(span_lo - 0.25 * (span_hi - span_lo), span_hi + 0.5 * (span_hi - span_lo),
                    24)
    b = np.linspace(b_lo, b_hi, 10)
    lapse = np.unique(np.clip([0.0, 0.02, 0.05], l_lo, l_hi))
    return np.stack(np.meshgrid(a, b, lapse, indexing="ij"), axis=-1).reshape(-1, 3)


def _score(theta: np.ndarray, data: _Data, k: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the gradient of the log-likelihood in (a, log β, λ), its Hessian, and the
    expected (Fisher) information Σ n/(ψ(1 − ψ))·∂ψ∂ψᵀ."""
    p, f, df = _probabilities(theta, data)
    a, beta, lapse = theta[:, 0:1], np.exp(theta[:, 1:2]), theta[:, 2:3]
    u = beta * (data.t - a)
    ddf = df * (1.0 - np.exp(np.minimum(u, 50.0))) if data.form == "weibull" \
        else df * (1.0 - 2.0 * f)
    c = 1.0 - data.guess - lapse
    d = np.stack([c * df * -beta, c * df * u, -f], axis=-1)  # ∂ψ/∂θ
    both = ddf * u + df
    second = np.stack([  # ∂²ψ/∂θ², the upper triangle
        c * ddf * beta ** 2, -c * beta * both, beta * df, c * u * both, -df * u,
        np.zeros_like(u)], axis=-1)
    first = k / p - (data.n - k) / (1.0 - p)
    curve = -k / p ** 2 - (data.n - k) / (1.0 - p) ** 2
    score = (first[..., None] * d).sum(axis=1)
    outer = d[..., :, None] * d[..., None, :]
    upper = (first[..., None] * second).sum(axis=1)
    hessian = (curve[..., None, None] * outer).sum(axis=1)
    for index, (i, j) in enumerate(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
        hessian[:, i, j] += upper[:, index]
        if i != j:
            hessian[:, j, i] += upper[:, index]
    information = ((data.n / (p * (1.0 - p)))[..., None, None] * outer).sum(axis=1)
    return score, hessian, information


def _positive_definite(m: np.ndarray) -> np.ndarray:
    """Per 3 x 3 symmetric matrix: are its leading principal minors all positive?"""
    one = m[:, 0, 0]
    two = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    three = (m[:, 0, 0] * (m[:, 1, 1] * m[:, 2, 2] - m[:, 1, 2] * m[:, 2, 1])
             - m[:, 0, 1] * (m[:, 1, 0] * m[:, 2, 2] - m[:, 1, 2] * m[:, 2, 0])
             + m[:, 0, 2] * (m[:, 1, 0] * m[:, 2, 1] - m[:, 1, 1] * m[:, 2, 0]))
    return (one > 0) & (two > 0) & (three > 0)


def _solve3(m: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with m·x = b for a stack of 3 x 3 systems, by the adjugate (no LAPACK call)."""
    c00 = m[:, 1, 1] * m[:, 2, 2] - m[:, 1, 2] * m[:, 2, 1]
    c01 = m[:, 1, 2] * m[:, 2, 0] - m[:, 1, 0] * m[:, 2, 2]
    c02 = m[:, 1, 0] * m[:, 2, 1] - m[:, 1, 1] * m[:, 2, 0]
    c10 = m[:, 0, 2] * m[:, 2, 1] - m[:, 0, 1] * m[:, 2, 2]
    c11 = m[:, 0, 0] * m[:, 2, 2] - m[:, 0, 2] * m[:, 2, 0]
    c12 = m[:, 0, 1] * m[:, 2, 0] - m[:, 0, 0] * m[:, 2, 1]
    c20 = m[:, 0, 1] * m[:, 1, 2] - m[:, 0, 2] * m[:, 1, 1]
    c21 = m[:, 0, 2] * m[:, 1, 0] - m[:, 0, 0] * m[:, 1, 2]
    c22 = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    det = m[:, 0, 0] * c00 + m[:, 0, 1] * c01 + m[:, 0, 2] * c02
    det = np.where(np.abs(det) > 1e-300, det, 1e-300)
    inverse = np.stack([np.stack([c00, c10, c20], -1), np.stack([c01, c11, c21], -1),
                        np.stack([c02, c12, c22], -1)], -2) / det[:, None, None]
    return (inverse * b[:, None, :]).sum(axis=-1)


def _criterion_levels(theta: np.ndarray, criterion: float, data: _Data) -> np.ndarray:
    """`criterion_level` of each row of parameters; math.inf where ψ never gets there."""
    a, beta, lapse = theta[:, 0], np.exp(theta[:, 1]), theta[:, 2]
    f = (criterion - data.guess) / (1.0 - data.guess - lapse)
    inside = (f > 0.0) & (f < 1.0)
    f = np.where(inside, f, 0.5)
    if data.form == "weibull":
        level = np.exp(a) * (-np.log1p(-f)) ** (1.0 / beta)
    else:
        level = a + np.log(f / (1.0 - f)) / beta
    return np.where(inside, level, math.inf)
