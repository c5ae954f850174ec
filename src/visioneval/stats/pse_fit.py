"""Points of subjective equality (PSE) from comparison tasks ("which line is longer?"), where
the comparison sweeps through the standard and the answers go from "never bigger" to
"always bigger": a yes/no-type psychometric function, not a forced choice with a guess rate.

The model is P("comparison bigger" | x) = λ + (1 − 2λ)·Φ((x − PSE)/σ): a cumulative
Gaussian with both lapses tied (a lapse answers "bigger" or "smaller" alike, so the floor
and the ceiling lapse by the same λ; psignifit 4's "equal asymptote" experiment type,
Schütt, Harmeling, Macke & Wichmann 2016). The PSE is the 50% point; the JND is
σ·Φ⁻¹(0.75) ≈ 0.674σ, the distance from the PSE to the Gaussian's 75% point (lapses aside);
the Weber fraction is JND / standard; the illusion strength is (PSE − standard) / standard
in percent (a Müller-Lyer standard that must be lengthened by 8% to look equal: +8%).

Maximum likelihood on binomial counts per level. σ is bounded as the threshold fit bounds
its width (docs/psychophysics.md, "The fit"): the Gaussian's rise from 5% to 95% (3.29σ,
psignifit's width at α = 0.05) is at least twice the smallest step between tested levels
and at most three times the tested range. λ lies in [0, 0.1] or is fixed.

Intervals: a parametric bootstrap (Wichmann & Hill 2001, II): binomial counts simulated at
the tested levels from the fit, each refitted, all at once (`_ascend`: Newton steps with
damping on every row, no optimiser call per resample), percentile 95%. The fit's σ is
biased low with a hundred-odd trials (the JND 3-4% small), and refits simulated from it are
biased low again, so their percentile interval of the JND fell short (about 92% of
runs held the true JND where 95% should): the refits are drawn twice, the second time from
the fit with log σ moved up by the first refits' median shortfall (one bias correction of
the generating curve), and the intervals come from the second (measure/pse_recovery.py and
measure/paradigm_recovery.py: about one point of coverage more for the JND and the PSE,
docs/psychophysics.md). An end of the PSE's
interval outside the tested levels is open (None), as the threshold's is; an end of the
JND's interval at σ's bound is open too (the levels cannot tell a steeper or a shallower
curve apart from it).

"Not reached" (no PSE, never an extrapolation), in this order:
1. fewer than 2 distinct levels;
2. the answers fall as the comparison grows (the comparison read reversed): the mirrored
   fit is better and beats answers that do not change with the level;
3. the answers do not change with the level: a likelihood-ratio test against one constant
   probability with p ≥ 0.05;
4. the fitted 50% point lies outside the tested levels (`outside` says on which side);
and, should it happen, a fit that did not converge.
"""

# Imports inside functions: numpy and scipy load on first use: `visioneval --help` loads the
# stats modules a command names.

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

Status = Literal["reached", "not reached"]
Side = Literal["below", "above"]
Interval = tuple[float | None, float | None]

LAPSE_BOUNDS = (0.0, 0.1)
RESAMPLES = 1000
SEED = 20261204
FLAT_P = 0.05  # the likelihood-ratio test against answers that do not change with the level
JND_Z = 0.6744897501960817  # Φ⁻¹(0.75)
RISE_Z = 3.2897072539029446  # Φ⁻¹(0.95) − Φ⁻¹(0.05): the rise from 5% to 95% in σ
WIDTH_STEPS = 2.0  # the narrowest rise, in smallest steps between tested levels
WIDTH_SPANS = 3.0  # the widest rise, in tested ranges (psignifit 4's width bound)
STARTS = 4  # starting points of different σ for the fit of the observed counts
_EPS = 1e-12


@dataclass(frozen=True)
class PseFit:
    """One fit. `pse` and `jnd` (and their intervals) are None when the status is
    "not reached" (`reason` says why; `outside` on which side of the tested levels the 50%
    point lies when that is the reason). `sigma`, `lapse` and `deviance` are the fit's,
    None only when no fit was made (fewer than 2 levels). Interval ends are None where they
    are open: beyond the tested levels (PSE) or at σ's bound (JND)."""

    status: Status
    reason: str | None
    pse: float | None
    jnd: float | None
    sigma: float | None
    lapse: float | None
    deviance: float | None  # against the saturated model (one probability per level)
    flat_p: float | None  # likelihood-ratio test against one probability at every level
    outside: Side | None
    lowest: float
    highest: float
    pse_ci: Interval | None = None
    jnd_ci: Interval | None = None
    deviance_p: float | None = None  # the bootstrap's: refits' deviances at least as large
    resamples: int = 0  # the bootstrap refits that converged
    pse_draws: tuple[float, ...] = field(default=(), repr=False, compare=False)
    """The converged refits' PSEs, so that a difference of two independent fits' PSEs (an
    illusion against its control) gets an interval from their draws."""
    jnd_draws: tuple[float, ...] = field(default=(), repr=False, compare=False)
    """The converged refits' JNDs, in the same order (two runs' JNDs compared)."""

    def illusion_strength(self, standard: float) -> float | None:
        """(PSE − standard) / standard in percent: how far the comparison must move to look
        equal to the standard; None when the PSE was not reached."""
        _check_standard(standard)
        return None if self.pse is None else 100.0 * (self.pse - standard) / standard

    def illusion_interval(self, standard: float) -> Interval | None:
        """`pse_ci` as an illusion strength in percent (open ends stay open)."""
        _check_standard(standard)
        if self.pse_ci is None:
            return None
        return _scaled(self.pse_ci, lambda v: 100.0 * (v - standard) / standard)

    def weber_fraction(self, standard: float) -> float | None:
        """JND / standard; None when the PSE was not reached."""
        _check_standard(standard)
        return None if self.jnd is None else self.jnd / standard

    def weber_interval(self, standard: float) -> Interval | None:
        """`jnd_ci` over the standard (open ends stay open)."""
        _check_standard(standard)
        if self.jnd_ci is None:
            return None
        return _scaled(self.jnd_ci, lambda v: v / standard)


def _check_standard(standard: float) -> None:
    if not (math.isfinite(standard) and standard > 0):
        raise ValueError(f"the standard must be a positive number (got {standard})")


def _scaled(interval: Interval, change: Callable[[float], float]) -> Interval:
    low, high = interval
    return (None if low is None else change(low), None if high is None else change(high))


@dataclass(frozen=True)
class _Data:
    """The counts on standardised levels u = (x − centre)/span, with the bounds of
    (PSE, log σ, λ) in those units."""

    u: np.ndarray
    k: np.ndarray
    n: np.ndarray
    centre: float
    span: float
    low: np.ndarray
    high: np.ndarray

    def k_weight(self, k: np.ndarray, p: np.ndarray) -> np.ndarray:
        """∂ log L / ∂ψ per level."""
        return k / p - (self.n - k) / (1.0 - p)

    def level(self, u: np.ndarray | float) -> np.ndarray | float:
        return self.centre + self.span * u


def fit_pse(levels: Sequence[float], n_bigger: Sequence[int], n_trials: Sequence[int],
            lapse: float | None = None, lapse_bounds: tuple[float, float] = LAPSE_BOUNDS,
            resamples: int = RESAMPLES, seed: int = SEED) -> PseFit:
    """The maximum-likelihood fit of P("comparison bigger") to `n_bigger` of `n_trials` at
    each comparison level, with `resamples` parametric-bootstrap refits for the 95%
    intervals (0: none). λ is fitted within `lapse_bounds`, or fixed at `lapse`.

    BLAS runs on one thread meanwhile, as in the threshold fit: the refits are thousands of
    3 x 3 solves, and worker threads spinning for a busy machine's cores only slow them."""
    from threadpoolctl import threadpool_limits  # a fit's dependency, loaded with the fit

    bounds = (lapse, lapse) if lapse is not None else lapse_bounds
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit(levels, n_bigger, n_trials, bounds, resamples, seed)


def _fit(levels: Sequence[float], n_bigger: Sequence[int], n_trials: Sequence[int],
         lapse_bounds: tuple[float, float], resamples: int, seed: int) -> PseFit:
    import numpy as np  # loaded with the fit

    x, k, n = _arrays(levels, n_bigger, n_trials, lapse_bounds)
    lowest, highest = float(x.min()), float(x.max())
    if len(np.unique(x)) < 2:
        return PseFit("not reached", f"{len(np.unique(x))} distinct level (at least 2 are "
                      "needed to fit a curve)", None, None, None, None, None, None, None,
                      lowest, highest)
    data = _prepare(x, k, n, lapse_bounds)
    theta, converged = _best_fit(data, k)
    log_l = float(_log_likelihood(theta[None, :], data, k[None, :])[0])
    mirrored, _ = _best_fit(data, n - k)
    mirrored_l = float(_log_likelihood(mirrored[None, :], data, (n - k)[None, :])[0])
    flat_l, free = _flat(k, n), 2 + int(data.high[2] > data.low[2])
    flat_p = _flat_p(log_l, flat_l, free)
    deviance = float(2.0 * (_saturated(k, n) - log_l))
    pse_u, sigma_u, fitted_lapse = float(theta[0]), math.exp(float(theta[1])), float(theta[2])
    sigma = sigma_u * data.span
    outside: Side | None = None
    if mirrored_l > log_l + 1e-6 and _flat_p(mirrored_l, flat_l, free) < FLAT_P:
        reason: str | None = (
            "the answers fall as the comparison grows (P(bigger) should rise with the "
            "level): read reversed? Count the other answer if the question asks for the "
            "smaller")
    elif flat_p >= FLAT_P:
        reason = ("the answers do not change with the level over the tested levels "
                  f"(likelihood-ratio p = {flat_p:.3g})")
    elif not converged:
        reason = "the fit did not converge"
    else:
        pse = float(data.level(pse_u))
        outside, reason = _where(pse, lowest, highest)
    if reason is not None:
        return PseFit("not reached", reason, None, None, sigma, fitted_lapse, deviance,
                      flat_p, outside, lowest, highest)
    found = PseFit("reached", None, float(data.level(pse_u)), JND_Z * sigma, sigma,
                   fitted_lapse, deviance, flat_p, None, lowest, highest)
    if resamples <= 0:
        return found
    first = _bootstrap(found, data, theta, deviance, resamples, seed)
    if not first.jnd_draws:
        return first
    import numpy as np  # loaded with the fit

    shortfall = float(np.median(np.log(first.jnd_draws))) - math.log(JND_Z * sigma)
    corrected = theta.copy()
    corrected[1] = min(max(theta[1] - shortfall, data.low[1]), data.high[1])
    second = _bootstrap(found, data, corrected, deviance, resamples, seed)
    return replace(second, deviance_p=first.deviance_p)  # the fit's own curve's test


def _where(pse: float, lowest: float, highest: float) -> tuple[Side | None, str | None]:
    """Rule 4: which side of the tested levels a 50% point outside them lies on."""
    if pse < lowest:
        return "below", (f"the answers are above 50% 'bigger' already at the lowest tested "
                         f"level {lowest:g}: the PSE is below the tested levels")
    if pse > highest:
        return "above", (f"the answers do not reach 50% 'bigger' by the highest tested level "
                         f"{highest:g}: the PSE is beyond the tested levels")
    return None, None


def _arrays(levels: Sequence[float], n_bigger: Sequence[int], n_trials: Sequence[int],
            lapse_bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counts as arrays; one clear line for input no fit can use."""
    import numpy as np  # loaded with the fit

    if not len(levels) == len(n_bigger) == len(n_trials) or not len(levels):
        raise ValueError(f"levels, n_bigger and n_trials need one value per level: got "
                         f"{len(levels)}, {len(n_bigger)} and {len(n_trials)}")
    x = np.asarray(levels, dtype=np.float64)
    k = np.asarray(n_bigger, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    if not np.isfinite(x).all():
        raise ValueError("every level must be a finite number")
    if not (np.isfinite(n).all() and np.isfinite(k).all()):
        raise ValueError("n_bigger and n_trials must be finite counts")
    if (n <= 0).any():
        raise ValueError(f"n_trials must be at least 1 at every level (level "
                         f"{x[np.argmax(n <= 0)]:g} has {n[np.argmax(n <= 0)]:g})")
    if (k < 0).any() or (k > n).any():
        bad = int(np.argmax((k < 0) | (k > n)))
        raise ValueError(f"n_bigger must lie between 0 and n_trials (level {x[bad]:g}: "
                         f"{k[bad]:g} of {n[bad]:g})")
    low, high = lapse_bounds
    if not 0.0 <= low <= high <= 0.1 + 1e-12:
        raise ValueError(f"the lapse rate must lie in [0, 0.1] (got {lapse_bounds})")
    return x, k, n


def _prepare(x: np.ndarray, k: np.ndarray, n: np.ndarray,
             lapse_bounds: tuple[float, float]) -> _Data:
    """Standardised levels and the bounds: the PSE within three ranges of the tested
    levels (only to keep the optimiser finite; a PSE outside them is not reached anyway),
    σ between the width bounds of the module docstring, λ within its bounds."""
    import numpy as np  # loaded with the fit

    centre, span = (float(x.min()) + float(x.max())) / 2, float(x.max() - x.min())
    u = (x - centre) / span
    step = float(np.diff(np.unique(u)).min())
    sigma_low = WIDTH_STEPS * step / RISE_Z
    sigma_high = WIDTH_SPANS / RISE_Z
    low = np.array([-3.5, math.log(sigma_low), lapse_bounds[0]])
    high = np.array([3.5, math.log(max(sigma_high, sigma_low)), lapse_bounds[1]])
    return _Data(u, k, n, centre, span, low, high)


def _psi(theta: np.ndarray, data: _Data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P("bigger") per parameter row and level, with z = (u − PSE)/σ and Φ(z)."""
    import numpy as np  # loaded with the fit
    from scipy.special import ndtr  # loaded with the fit

    mu, sigma, lapse = theta[:, 0:1], np.exp(theta[:, 1:2]), theta[:, 2:3]
    z = (data.u - mu) / sigma
    cdf = ndtr(z)
    p = lapse + (1.0 - 2.0 * lapse) * cdf
    return np.clip(p, _EPS, 1.0 - _EPS), z, cdf


def _log_likelihood(theta: np.ndarray, data: _Data, k: np.ndarray) -> np.ndarray:
    """Binomial log-likelihood per row, without the constant log C(n, k)."""
    import numpy as np  # loaded with the fit

    p, _, _ = _psi(theta, data)
    return (k * np.log(p) + (data.n - k) * np.log1p(-p)).sum(axis=-1)


def _saturated(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The log-likelihood of one free probability per level (rows of counts)."""
    from scipy.special import xlogy  # loaded with the fit

    return (xlogy(k, k / n) + xlogy(n - k, 1.0 - k / n)).sum(axis=-1)


def _flat(k: np.ndarray, n: np.ndarray) -> float:
    """The log-likelihood of one probability at every level."""
    from scipy.special import xlogy  # loaded with the fit

    c = float(k.sum() / n.sum())
    return float(xlogy(k.sum(), c) + xlogy(n.sum() - k.sum(), 1.0 - c))


def _flat_p(log_l: float, flat_l: float, free: int) -> float:
    """The likelihood-ratio p of the fit against one probability, on free − 1 df."""
    from scipy.stats import chi2  # loaded with the fit

    return float(chi2.sf(max(0.0, 2.0 * (log_l - flat_l)), df=free - 1))


def _grid(data: _Data) -> np.ndarray:
    """A coarse grid over (PSE, log σ, λ), one point a row: the starting points."""
    import numpy as np  # loaded with the fit

    mu = np.linspace(-1.0, 1.0, 21)
    s = np.linspace(data.low[1], data.high[1], 8)
    lapse = np.unique(np.clip([0.0, 0.02, 0.05], data.low[2], data.high[2]))
    return np.stack(np.meshgrid(mu, s, lapse, indexing="ij"), axis=-1).reshape(-1, 3)


def _best_fit(data: _Data, k: np.ndarray) -> tuple[np.ndarray, bool]:
    """The highest maximum reached from the best grid points at `STARTS` values of σ
    (one start can stop at a too-steep local maximum when levels are far apart)."""
    import numpy as np  # loaded with the fit

    grid = _grid(data)
    ll = _log_likelihood(grid, data, np.tile(k, (len(grid), 1)))
    best: dict[float, int] = {}
    for i in np.argsort(-ll, kind="stable"):
        best.setdefault(float(grid[i, 1]), int(i))
    starts = grid[list(best.values())[:STARTS]]
    rows = np.tile(k, (len(starts), 1))
    theta, converged = _ascend(data, rows, starts)
    found = np.where(converged, _log_likelihood(theta, data, rows), -np.inf)
    if not converged.any():
        found = _log_likelihood(theta, data, rows)
    i = int(np.argmax(found))
    return theta[i], bool(converged[i])


def _score(theta: np.ndarray, data: _Data, k: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the gradient of the log-likelihood in (PSE, log σ, λ), its Hessian, and the
    expected (Fisher) information Σ n/(ψ(1 − ψ))·∂ψ∂ψᵀ."""
    import numpy as np  # loaded with the fit

    p, z, cdf = _psi(theta, data)
    sigma, lapse = np.exp(theta[:, 1:2]), theta[:, 2:3]
    pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    c = 1.0 - 2.0 * lapse
    d = np.stack([-c * pdf / sigma, -c * pdf * z, 1.0 - 2.0 * cdf], axis=-1)  # ∂ψ/∂θ
    zero = np.zeros_like(z)
    second = np.stack([  # ∂²ψ/∂θ², row by row
        np.stack([-c * pdf * z / sigma ** 2, -c * pdf * (z * z - 1) / sigma,
                  2 * pdf / sigma], axis=-1),
        np.stack([-c * pdf * (z * z - 1) / sigma, -c * pdf * z * (z * z - 1),
                  2 * pdf * z], axis=-1),
        np.stack([2 * pdf / sigma, 2 * pdf * z, zero], axis=-1)], axis=-2)
    first = data.k_weight(k, p)
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


def _bootstrap(found: PseFit, data: _Data, theta: np.ndarray, deviance: float,
               resamples: int, seed: int) -> PseFit:
    """Refit `resamples` binomial data sets simulated from the fit at the tested levels,
    from the fit's own parameters and from each row's best grid point per lapse rate; the
    best converged refit of a row is kept, a row with none is left out."""
    import numpy as np  # loaded with the fit

    rng = np.random.default_rng(seed)
    p, _, _ = _psi(theta[None, :], data)
    counts = rng.binomial(data.n.astype(np.int64), p[0], size=(resamples, len(data.u)))
    k = counts.astype(np.float64)
    grid = _grid(data)
    pg, _, _ = _psi(grid, data)
    grid_l = k @ np.log(pg).T + (data.n - k) @ np.log1p(-pg).T
    starts = [np.tile(theta, (resamples, 1))]
    for lapse in np.unique(grid[:, 2]):
        among = np.flatnonzero(grid[:, 2] == lapse)
        starts.append(grid[among[np.argmax(grid_l[:, among], axis=1)]])
    tries = len(starts)
    rows = np.tile(k, (tries, 1))
    refits, converged = _ascend(data, rows, np.concatenate(starts))
    score = np.where(converged, _log_likelihood(refits, data, rows), -np.inf)
    best = np.argmax(score.reshape(tries, resamples), axis=0)
    kept = refits.reshape(tries, resamples, 3)[best, np.arange(resamples)]
    ok = converged.reshape(tries, resamples).any(axis=0)
    kept, k = kept[ok], k[ok]
    if not len(kept):
        return found
    deviances = 2.0 * (_saturated(k, data.n) - _log_likelihood(kept, data, k))
    pse = np.asarray(data.level(kept[:, 0]))
    low, high = _percentiles(pse)
    s_low, s_high = _percentiles(kept[:, 1])
    jnd_ci: Interval = (
        None if s_low <= data.low[1] + 1e-9 else JND_Z * math.exp(s_low) * data.span,
        None if s_high >= data.high[1] - 1e-9 else JND_Z * math.exp(s_high) * data.span)
    return PseFit(found.status, found.reason, found.pse, found.jnd, found.sigma, found.lapse,
                  found.deviance, found.flat_p, found.outside, found.lowest, found.highest,
                  pse_ci=(low if low >= found.lowest else None,
                          high if high <= found.highest else None),
                  jnd_ci=jnd_ci,
                  deviance_p=float((deviances >= deviance - 1e-9).mean()),
                  resamples=len(kept), pse_draws=tuple(float(v) for v in pse),
                  jnd_draws=tuple(float(JND_Z * math.exp(v) * data.span)
                                  for v in kept[:, 1]))


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles, each a draw (no interpolation), so that a draw at
    a bound is recognised as one."""
    import numpy as np  # loaded with the fit

    low, high = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)
