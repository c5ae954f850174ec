"""The Weber fraction w of a ratio discrimination ("which side has more dots?") by maximum
likelihood, with a parametric-bootstrap interval.

The model is the standard one of the approximate number system (Pica, Lemer, Izard & Dehaene
2004, Science 306:499; Halberda & Feigenson 2008, Dev Psychol 44:1457): each of two
magnitudes n1 < n2 is seen as a Gaussian with mean n and standard deviation w·n (scalar
variability), so their difference is told right with probability
Φ((n2 − n1)/(w·√(n1² + n2²))). With the ratio r = n2/n1 (larger over smaller) that is
Φ(a(r)/w), a(r) = (r − 1)/√(1 + r²): a function of the ratio alone, so the ratio is the
level. A lapse rate λ (an answer given at random now and then, right half the time) makes it

    ψ(r) = λ + (1 − 2λ)·Φ(a(r)/w),

with ψ(1) = 0.5 (chance) and a ceiling of 1 − λ; λ is fitted within [0, 0.1], as the
threshold fit bounds it. w is the value of a(r) at which Φ reaches Φ(1) ≈ 84% (lapses
aside): the ratio told apart 84% of the time has a(r) = w. The smaller w, the finer the
discrimination.

Maximum likelihood on binomial counts per ratio; every row of the bootstrap refitted at once
(`_ascend`: Newton steps with Levenberg-Marquardt damping, as the PSE fit's). The fit's w
runs low: λ and w trade off (a higher λ and a steeper curve fit the same errors near the
ceiling), and λ's bound at 0 lets the trade lean one way only: by up to 6% in the median at
w = 0.2 to 0.3 with 9 ratios from 13/12 to 3 of 16 trials each (measure/weber_recovery.py).
The parametric bootstrap measures that bias: the refits' median log w lies below the fit's
by about as much as the fit's lies below the truth, so the reported w is the fit's with that
difference taken off (in log w: 2·log ŵ − median log w*, the bootstrap bias correction of
Efron & Tibshirani 1993, ch. 10, for the median), and the interval is the refits' 2.5th to
97.5th percentile moved by the same factor (Wichmann & Hill 2001, II, for the percentile
interval). `fitted_w`, the curve drawn, stays the maximum-likelihood fit; without resamples
w is that fit's. An end is open (None) where the tested ratios cannot tell a smaller or a
larger w apart: below a(smallest tested ratio), where every tested ratio would be told apart
more than 84% of the time, or above a(largest tested ratio), where none would. The same fit
gives the threshold every forced choice has: the ratio at which ψ reaches the criterion,
with its interval (open beyond the tested ratios).

"Not reached" (no w, never an extrapolation), in this order:
1. fewer than 2 distinct ratios;
2. the answers fall below chance as the ratio grows (the smaller side chosen): the fit to
   the wrong answers is better and beats chance;
3. the answers do not beat chance: a likelihood-ratio test against ψ = 0.5 on 2 degrees of
   freedom (w, λ) with p ≥ 0.05;
4. the ratio told apart 84% of the time (lapses aside: a(r) = w) lies outside the tested
   ratios: every tested ratio is told apart more often (w below the range the ratios
   measure) or none is (w above it); checked on the maximum-likelihood w, and on the
   corrected one after the bootstrap.
"""

# Imports inside functions: numpy and scipy load on first use, so that `visioneval --help`
# stays light.

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

Status = Literal["reached", "not reached"]
Interval = tuple[float | None, float | None]

CRITERION = 0.75
LAPSE_BOUNDS = (0.0, 0.1)
RESAMPLES = 1000
SEED = 20261215
CHANCE_P = 0.05
W_RANGE = (0.2, 10.0)  # the optimiser's bounds of w, in a(lowest ratio) and a(highest ratio)
_EPS = 1e-12


def spread_of(ratio: float) -> float:
    """a(r) = (r − 1)/√(1 + r²): how far apart a ratio puts two magnitudes, in units of
    their combined spread w."""
    return (ratio - 1.0) / math.sqrt(1.0 + ratio * ratio)


def ratio_of(spread: float) -> float | None:
    """The ratio r ≥ 1 with a(r) = `spread` (0 ≤ spread < 1); None for a spread no ratio
    reaches (a(r) approaches 1 as r grows)."""
    if not 0.0 <= spread < 1.0:
        return None
    c = 1.0 - spread * spread
    return (1.0 + math.sqrt(max(0.0, 1.0 - c * c))) / c


def weber_psi(ratio: float, w: float, lapse: float = 0.0) -> float:
    """ψ(r) = λ + (1 − 2λ)·Φ(a(r)/w): the chance of naming the larger of two magnitudes
    whose ratio (larger over smaller) is `ratio`; 0.5 at a ratio of 1 or below."""
    z = max(spread_of(ratio), 0.0) / w
    return lapse + (1.0 - 2.0 * lapse) * 0.5 * math.erfc(-z / math.sqrt(2.0))


def weber_ratio(w: float, criterion: float = CRITERION, lapse: float = 0.0) -> float | None:
    """The ratio at which ψ reaches `criterion`, or None when it never does (the criterion
    at or below chance, at or above the ceiling 1 − λ, or beyond every ratio)."""
    from statistics import NormalDist

    share = (criterion - lapse) / (1.0 - 2.0 * lapse)
    if not 0.5 < share < 1.0:
        return None
    return ratio_of(w * NormalDist().inv_cdf(share))


def w_at(ratio: float) -> float:
    """The w whose ratio told apart Φ(1) ≈ 84% of the time (lapses aside) is `ratio`:
    a(ratio)."""
    return spread_of(ratio)


@dataclass(frozen=True)
class WeberFit:
    """One fit. `w` (bias-corrected with resamples, module docstring), `threshold` and their
    intervals are None when the status is "not reached" (`reason` says why); `fitted_w`
    (the maximum-likelihood w) and `lapse` are the fit's all the same (None only without a
    fit: fewer than 2 ratios), so a chart can draw it. Interval ends are None where they are
    open (module docstring)."""

    status: Status
    reason: str | None
    w: float | None
    threshold: float | None  # the ratio at which ψ reaches `criterion`
    fitted_w: float | None
    lapse: float | None
    criterion: float
    lowest: float
    highest: float
    chance_p: float | None = None  # likelihood-ratio test against ψ = 0.5
    deviance: float | None = None  # against the saturated model (one probability per ratio)
    dispersion: float | None = None  # Pearson X² / (ratios − 2); None without residual df
    dispersion_p: float | None = None
    w_ci: Interval | None = None
    threshold_ci: Interval | None = None
    deviance_p: float | None = None  # the bootstrap's
    resamples: int = 0  # the refits that converged
    w_draws: tuple[float, ...] = field(default=(), repr=False, compare=False)
    """The converged refits' w (moved as `w` is), so that two independent fits' w can be
    set against each other (an interval of their ratio from paired draws)."""


@dataclass(frozen=True)
class _Data:
    """The counts with each ratio's a(r), and the bounds of (log w, λ)."""

    a: np.ndarray
    k: np.ndarray
    n: np.ndarray
    low: np.ndarray
    high: np.ndarray


def fit_weber(ratios: Sequence[float], n_correct: Sequence[int], n_trials: Sequence[int],
              criterion: float = CRITERION, resamples: int = RESAMPLES,
              seed: int = SEED) -> WeberFit:
    """The maximum-likelihood fit of ψ to `n_correct` of `n_trials` at each ratio (larger
    over smaller, > 1), with `resamples` parametric-bootstrap refits for the intervals
    (0: none). ValueError with one line for counts no fit can use.

    BLAS runs on one thread meanwhile, as in the other fits: the refits are thousands of
    2 x 2 solves, and worker threads spinning for a busy machine's cores only slow them."""
    from threadpoolctl import threadpool_limits  # a fit's dependency, loaded with the fit

    with threadpool_limits(limits=1, user_api="blas"):
        return _fit(ratios, n_correct, n_trials, criterion, resamples, seed)


def _fit(ratios: Sequence[float], n_correct: Sequence[int], n_trials: Sequence[int],
         criterion: float, resamples: int, seed: int) -> WeberFit:
    import numpy as np  # loaded with the fit

    r, k, n = _arrays(ratios, n_correct, n_trials, criterion)
    lowest, highest = float(r.min()), float(r.max())
    distinct = len(np.unique(r))
    if distinct < 2:
        return WeberFit("not reached", f"{distinct} distinct ratio (at least 2 are needed "
                        "to fit a curve)", None, None, None, None, criterion, lowest, highest)
    data = _prepare(r, k, n)
    theta, converged = _best_fit(data, k)
    log_l = float(_log_likelihood(theta[None, :], data, k[None, :])[0])
    wrong, _ = _best_fit(data, n - k)
    wrong_l = float(_log_likelihood(wrong[None, :], data, (n - k)[None, :])[0])
    chance_l = float((n * math.log(0.5)).sum())
    chance_p = _chance_p(log_l, chance_l)
    fitted_w, lapse = math.exp(float(theta[0])), float(theta[1])
    phi, phi_p = _dispersion(data, theta)
    found = WeberFit("not reached", None, None, None, fitted_w, lapse, criterion, lowest,
                     highest, chance_p, float(2.0 * (_saturated(k, n) - log_l)), phi, phi_p)
    reason = _reason(found, wrong_l > log_l + 1e-6 and _chance_p(wrong_l, chance_l) < CHANCE_P,
                     converged)
    if reason is not None:
        return replace(found, reason=reason)
    found = replace(found, status="reached", w=fitted_w,
                    threshold=_threshold(fitted_w, lapse, criterion, lowest, highest))
    if resamples <= 0:
        return found
    return _bootstrap(found, data, theta, resamples, seed)


def _reason(found: WeberFit, below_chance: bool, converged: bool) -> str | None:
    """Why a fit gives no w (rules 2 to 4 of the module docstring), or None."""
    assert found.fitted_w is not None and found.chance_p is not None
    if below_chance:
        return ("the answers fall below chance as the ratio grows: the smaller side is "
                "chosen (read reversed, or answered from a cue that runs against the "
                "number)")
    if found.chance_p >= CHANCE_P:
        return ("the answers do not beat chance over the tested ratios (likelihood-ratio "
                f"p = {found.chance_p:.3g})")
    if not converged:
        return "the fit did not converge"
    return _outside(found.fitted_w, found.lowest, found.highest)


def _outside(w: float, lowest: float, highest: float) -> str | None:
    """Rule 4: why a w lies beyond what the tested ratios measure, or None."""
    w_low, w_high = w_at(lowest), w_at(highest)
    if w < w_low:
        return (f"every tested ratio is told apart more than 84% of the time (lapses "
                f"aside), the smallest ({lowest:.3g}) too: w is below {w_low:.3g}, "
                "finer than the tested ratios measure")
    if w > w_high:
        return (f"no tested ratio is told apart 84% of the time (lapses aside), the "
                f"largest ({highest:.3g}) neither: w is above {w_high:.3g}")
    return None


def _threshold(w: float, lapse: float, criterion: float, lowest: float,
               highest: float) -> float | None:
    found = weber_ratio(w, criterion, lapse)
    return found if found is not None and lowest <= found <= highest else None


def _arrays(ratios: Sequence[float], n_correct: Sequence[int], n_trials: Sequence[int],
            criterion: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counts as arrays; one clear line for input no fit can use."""
    import numpy as np  # loaded with the fit

    if not len(ratios) == len(n_correct) == len(n_trials) or not len(ratios):
        raise ValueError(f"ratios, n_correct and n_trials need one value per ratio: got "
                         f"{len(ratios)}, {len(n_correct)} and {len(n_trials)}")
    r = np.asarray(ratios, dtype=np.float64)
    k = np.asarray(n_correct, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    if not (np.isfinite(r).all() and (r > 1.0).all()):
        bad = r[~(np.isfinite(r) & (r > 1.0))][0]
        raise ValueError(f"every ratio (larger over smaller) must be a number above 1 "
                         f"(got {bad:g})")
    if not (np.isfinite(n).all() and np.isfinite(k).all()) or (n <= 0).any():
        raise ValueError("n_trials must be at least 1 and n_correct finite at every ratio")
    if (k < 0).any() or (k > n).any():
        bad = int(np.argmax((k < 0) | (k > n)))
        raise ValueError(f"n_correct must lie between 0 and n_trials (ratio {r[bad]:g}: "
                         f"{k[bad]:g} of {n[bad]:g})")
    if not 0.5 < criterion < 1.0:
        raise ValueError(f"the criterion is a proportion correct between 0.5 and 1 (got "
                         f"{criterion})")
    return r, k, n


def _prepare(r: np.ndarray, k: np.ndarray, n: np.ndarray) -> _Data:
    """a(r) per ratio and the bounds: w from a fifth of a(lowest ratio), where every tested
    ratio is told apart all but always, to ten times a(highest ratio), where none is told
    apart from chance (only to keep the optimiser finite: a w beyond the tested ratios is
    not reached anyway); λ within its bounds."""
    import numpy as np  # loaded with the fit

    a = (r - 1.0) / np.sqrt(1.0 + r * r)
    low = np.array([math.log(W_RANGE[0] * float(a.min())), LAPSE_BOUNDS[0]])
    high = np.array([math.log(W_RANGE[1] * float(a.max())), LAPSE_BOUNDS[1]])
    return _Data(a, k, n, low, high)


def _psi(theta: np.ndarray, data: _Data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ψ per parameter row (log w, λ) and ratio, with z = a/w and Φ(z)."""
    import numpy as np  # loaded with the fit
    from scipy.special import ndtr  # loaded with the fit

    w, lapse = np.exp(theta[:, 0:1]), theta[:, 1:2]
    z = data.a / w
    cdf = ndtr(z)
    p = lapse + (1.0 - 2.0 * lapse) * cdf
    return np.clip(p, _EPS, 1.0 - _EPS), z, cdf


def _log_likelihood(theta: np.ndarray, data: _Data, k: np.ndarray) -> np.ndarray:
    """Binomial log-likelihood per row, without the constant log C(n, k)."""
    import numpy as np  # loaded with the fit

    p, _, _ = _psi(theta, data)
    return (k * np.log(p) + (data.n - k) * np.log1p(-p)).sum(axis=-1)


def _saturated(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The log-likelihood of one free probability per ratio (rows of counts)."""
    from scipy.special import xlogy  # loaded with the fit

    return (xlogy(k, k / n) + xlogy(n - k, 1.0 - k / n)).sum(axis=-1)


def _chance_p(log_l: float, chance_l: float) -> float:
    """The likelihood-ratio p of a fit against ψ = 0.5 everywhere, on 2 df (w and λ)."""
    from scipy.stats import chi2  # loaded with the fit

    return float(chi2.sf(max(0.0, 2.0 * (log_l - chance_l)), df=2))


def _dispersion(data: _Data, theta: np.ndarray) -> tuple[float | None, float | None]:
    """φ = Pearson X² / (ratios − 2) and the p of X² on those degrees of freedom, as the
    threshold fit's: how much more the counts vary between ratios than the model says."""
    from scipy.stats import chi2  # loaded with the fit

    df = len(data.a) - 2
    if df <= 0:
        return None, None
    p, _, _ = _psi(theta[None, :], data)
    x2 = float(((data.k - data.n * p[0]) ** 2 / (data.n * p[0] * (1.0 - p[0]))).sum())
    return x2 / df, float(chi2.sf(x2, df))


def _grid(data: _Data) -> np.ndarray:
    """A coarse grid over (log w, λ), one point a row: the starting points."""
    import numpy as np  # loaded with the fit

    log_w = np.linspace(data.low[0], data.high[0], 24)
    lapse = np.array([0.0, 0.02, 0.05])
    return np.stack(np.meshgrid(log_w, lapse, indexing="ij"), axis=-1).reshape(-1, 2)


def _best_fit(data: _Data, k: np.ndarray) -> tuple[np.ndarray, bool]:
    """The highest maximum reached from the best grid point at each lapse rate."""
    import numpy as np  # loaded with the fit

    grid = _grid(data)
    ll = _log_likelihood(grid, data, np.tile(k, (len(grid), 1)))
    starts = np.stack([grid[np.flatnonzero(grid[:, 1] == lapse)[
        np.argmax(ll[grid[:, 1] == lapse])]] for lapse in np.unique(grid[:, 1])])
    rows = np.tile(k, (len(starts), 1))
    theta, converged = _ascend(data, rows, starts)
    found = np.where(converged, _log_likelihood(theta, data, rows), -np.inf)
    if not converged.any():
        found = _log_likelihood(theta, data, rows)
    i = int(np.argmax(found))
    return theta[i], bool(converged[i])


def _score(theta: np.ndarray, data: _Data, k: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the gradient of the log-likelihood in (log w, λ), its Hessian and the
    expected (Fisher) information Σ n/(ψ(1 − ψ))·∂ψ∂ψᵀ. With z = a/w, ∂z/∂log w = −z."""
    import numpy as np  # loaded with the fit

    p, z, cdf = _psi(theta, data)
    lapse = theta[:, 1:2]
    pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    c = 1.0 - 2.0 * lapse
    d = np.stack([-c * pdf * z, 1.0 - 2.0 * cdf], axis=-1)  # ∂ψ/∂θ
    second = np.stack([  # ∂²ψ/∂θ², row by row
        np.stack([-c * pdf * z * (z * z - 1.0), 2.0 * pdf * z], axis=-1),
        np.stack([2.0 * pdf * z, np.zeros_like(z)], axis=-1)], axis=-2)
    first = k / p - (data.n - k) / (1.0 - p)
    curve = -k / p ** 2 - (data.n - k) / (1.0 - p) ** 2
    outer = d[..., :, None] * d[..., None, :]
    score = (first[..., None] * d).sum(axis=1)
    hessian = (curve[..., None, None] * outer + first[..., None, None] * second).sum(axis=1)
    information = ((data.n / (p * (1.0 - p)))[..., None, None] * outer).sum(axis=1)
    return score, hessian, information


def _ascend(data: _Data, k: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row moved to its maximum likelihood (`stats.damped_ascent`)."""
    from visioneval.stats.damped_ascent import ascend  # numpy: loaded with the fit

    return ascend(theta, k, data.low, data.high,
                  lambda t, kk: _log_likelihood(t, data, kk),
                  lambda t, kk: _score(t, data, kk))


def _bootstrap(found: WeberFit, data: _Data, theta: np.ndarray, resamples: int,
               seed: int) -> WeberFit:
    """Refit `resamples` binomial data sets simulated from the fit at the tested ratios,
    from the fit's own parameters and from each row's best grid point per lapse rate; the
    best converged refit of a row is kept, a row with none is left out."""
    import numpy as np  # loaded with the fit

    assert found.w is not None and found.lapse is not None and found.deviance is not None
    rng = np.random.default_rng(seed)
    p, _, _ = _psi(theta[None, :], data)
    k = rng.binomial(data.n.astype(np.int64), p[0],
                     size=(resamples, len(data.a))).astype(np.float64)
    grid = _grid(data)
    pg, _, _ = _psi(grid, data)
    grid_l = k @ np.log(pg).T + (data.n - k) @ np.log1p(-pg).T
    starts = [np.tile(theta, (resamples, 1))]
    for lapse in np.unique(grid[:, 1]):
        among = np.flatnonzero(grid[:, 1] == lapse)
        starts.append(grid[among[np.argmax(grid_l[:, among], axis=1)]])
    tries = len(starts)
    rows = np.tile(k, (tries, 1))
    refits, converged = _ascend(data, rows, np.concatenate(starts))
    score = np.where(converged, _log_likelihood(refits, data, rows), -np.inf)
    best = np.argmax(score.reshape(tries, resamples), axis=0)
    kept = refits.reshape(tries, resamples, 2)[best, np.arange(resamples)]
    ok = converged.reshape(tries, resamples).any(axis=0)
    kept, k = kept[ok], k[ok]
    if not len(kept):
        return found
    deviances = 2.0 * (_saturated(k, data.n) - _log_likelihood(kept, data, k))
    # The refits' median log w lies below the fit's as the fit's lies below the truth: the
    # bootstrap's estimate of the median bias, taken off the estimate and its draws.
    shift = math.log(found.w) - float(np.quantile(kept[:, 0], 0.5, method="inverted_cdf"))
    w = np.exp(kept[:, 0] + shift)
    corrected = found.w * math.exp(shift)
    thresholds = np.array([weber_ratio(math.exp(v), found.criterion, float(lapse)) or math.inf
                           for v, lapse in kept])
    t_low, t_high = _percentiles(thresholds)
    found = replace(found, threshold_ci=(t_low if t_low >= found.lowest else None,
                                         t_high if t_high <= found.highest else None),
                    deviance_p=float((deviances >= found.deviance - 1e-9).mean()),
                    resamples=len(kept))
    outside = _outside(corrected, found.lowest, found.highest)
    if outside is not None:
        return replace(found, status="not reached", reason=outside, w=None, threshold=None,
                       threshold_ci=None)
    low, high = _percentiles(w)
    w_low, w_high = w_at(found.lowest), w_at(found.highest)
    return replace(found, w=corrected, w_ci=(low if low >= w_low else None,
                                             high if high <= w_high else None),
                   w_draws=tuple(float(v) for v in w))


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles, each a draw (no interpolation), as the PSE fit's."""
    import numpy as np  # loaded with the fit

    low, high = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)
