"""Threshold intervals when stimuli differ in difficulty: coverage of the true threshold by
visioneval's 95% interval (the parametric binomial bootstrap of `fit`, Wichmann & Hill
2001, II) and by two candidate intervals, for a simulated observer whose probability of a
right answer varies from stimulus to stimulus around ψ.

The observer: at level x a stimulus is answered right with probability
γ + (1 − γ − λ)·expit(logit F(x) + τ·z), z standard normal, so τ = 0 is the binomial observer
of docs/psychophysics.md. Two ways for stimuli to differ:

- "each stimulus": every stimulus draws its own z and is answered once, as visioneval's
  stimuli are (each trial its own seed);
- "each level": the stimuli of one level share one z (a level whose images all came out
  harder), so the count at a level varies more than a binomial count.

The true threshold is where the mean curve over z, γ + (1 − γ − λ)·E expit(logit F + τz),
reaches 0.75 (Gauss-Hermite quadrature): the threshold of the population of stimuli.

Intervals, each 95% percentile from `--resamples` refits, an end outside the tested levels
open (an open end counts as infinite; a fit that is not reached covers nothing):

- current: `threshold_draws`, the same binomial simulation as `fit`'s bootstrap;
- beta-binomial: psignifit 4's likelihood (Schütt, Harmeling, Macke & Wichmann 2016): a
  level's proportion is Beta with mean ψ and variance η²ψ(1 − ψ), Beta(ψv, (1 − ψ)v) with
  v = 1/η² − 1 and one η for all levels, so a count's variance is nψ(1 − ψ)(1 + η²(n − 1)).
  η is fitted by maximum likelihood with ψ at the binomial fit; the counts are simulated
  from that beta-binomial and refitted as the point estimate is fitted;
- η prior: the same beta-binomial with η drawn per refit from its posterior under
  psignifit 4's default prior Beta(1, 10) (ψ at the binomial fit, a grid of η), so that a
  fit whose η is 0 at the maximum still carries some overdispersion;
- stimuli: a nonparametric bootstrap resampling the stimuli within each level (a count
  k* ~ Binomial(n, k/n)), refitted the same way;
- fitted: `threshold_draws(dispersion="fitted")`, `visioneval psychophysics --dispersion
  fitted`: beta-binomial refits with a count's variance φ times the binomial one, φ the
  fit's Pearson X² over its residual degrees of freedom (floored at 1), the draws spread
  about the threshold by t(0.975, df)/z(0.975).

Per cell also the median φ, the share of runs whose X² says overdispersed (p < 0.05: the
line `visioneval psychophysics` prints under its thresholds) and, among those runs, the
coverage of the current and the fitted interval.

    uv run python measure/overdispersion.py --runs 400 --resamples 500
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import expit, gammaln, logit
from scipy.stats import beta as beta_distribution

from visioneval.benchmarks.psychophysics.dataset import DEFAULT_LEVELS
from visioneval.loopback.observer import DEFAULT_CURVES, parse_curves
from visioneval.stats.psychometric import criterion_level
from visioneval.stats.psychometric_fit import (
    Fit,
    _criterion_levels,
    _prepare,
    _refit_all,
    threshold_draws,
    threshold_interval,
)

GUESS = 1 / 3
CRITERION = 0.75
FEATURE = "orientation"
TRIALS = 20  # `visioneval data synth-psychophysics` default per level
TAUS = (0.0, 0.5, 1.0, 1.5)
SHARING = ("each stimulus", "each level")
METHODS = ("current", "beta-binomial", "η prior", "stimuli", "fitted")
ETA_PRIOR = (1.0, 10.0)  # psignifit 4's default Beta prior on η
_ETA_GRID = np.linspace(0.0, 0.95, 96)
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)  # E g(z), z ~ N(0, 1)


@dataclass(frozen=True)
class Observer:
    alpha: float
    beta: float
    lapse: float
    tau: float

    def f(self, x: np.ndarray) -> np.ndarray:
        return -np.expm1(-(np.asarray(x) / self.alpha) ** self.beta)  # the Weibull

    def item_psi(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        f = np.clip(self.f(x), 1e-12, 1 - 1e-12)
        return GUESS + (1 - GUESS - self.lapse) * expit(logit(f) + self.tau * z)

    def mean_psi(self, x: float) -> float:
        values = self.item_psi(np.full(len(_NODES), x), _NODES)
        return float((values * _WEIGHTS).sum() / _WEIGHTS.sum())

    def true_threshold(self) -> float:
        if self.tau == 0:
            found = criterion_level(CRITERION, self.alpha, self.beta, GUESS, self.lapse)
            assert found is not None
            return found
        return brentq(lambda x: self.mean_psi(x) - CRITERION, self.alpha / 100,
                      self.alpha * 100, xtol=1e-10)


def observer(tau: float) -> Observer:
    curve = parse_curves(DEFAULT_CURVES)[FEATURE]
    return Observer(curve.alpha, curve.beta, curve.lapse, tau)


def answers(obs: Observer, levels: np.ndarray, trials: int, sharing: str,
            rng: np.random.Generator) -> np.ndarray:
    """Right answers per level, each stimulus answered once."""
    shape = (len(levels), trials)
    z = rng.standard_normal(shape) if sharing == "each stimulus" else np.repeat(
        rng.standard_normal((len(levels), 1)), trials, axis=1)
    p = obs.item_psi(np.repeat(levels[:, None], trials, axis=1), z)
    return (rng.random(shape) < p).sum(axis=1)


def beta_binomial_log_likelihood(k: np.ndarray, n: np.ndarray, psi: np.ndarray,
                                 eta: float) -> float:
    """psignifit 4's beta-binomial log-likelihood without log C(n, k); η = 0 is the
    binomial one."""
    psi = np.clip(psi, 1e-12, 1 - 1e-12)
    if eta < 1e-6:
        return float((k * np.log(psi) + (n - k) * np.log1p(-psi)).sum())
    v = 1 / eta ** 2 - 1
    a, b = psi * v, (1 - psi) * v
    return float((gammaln(k + a) + gammaln(n - k + b) - gammaln(n + v) - gammaln(a)
                  - gammaln(b) + gammaln(v)).sum())


def fit_eta(k: np.ndarray, n: np.ndarray, psi: np.ndarray) -> float:
    """η by maximum likelihood in [0, 0.95] with ψ held at the binomial fit."""
    found = minimize_scalar(lambda eta: -beta_binomial_log_likelihood(k, n, psi, eta),
                            bounds=(1e-6, 0.95), method="bounded")
    binomial = beta_binomial_log_likelihood(k, n, psi, 0.0)
    return float(found.x) if -found.fun > binomial else 0.0


def eta_posterior(k: np.ndarray, n: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """η's posterior on `_ETA_GRID` under psignifit 4's Beta(1, 10) prior, ψ held."""
    log_l = np.array([beta_binomial_log_likelihood(k, n, psi, eta) for eta in _ETA_GRID])
    weights = np.exp(log_l - log_l.max()) * beta_distribution.pdf(_ETA_GRID, *ETA_PRIOR)
    return weights / weights.sum()


def beta_binomial_counts(rng: np.random.Generator, n: np.ndarray, psi: np.ndarray,
                         etas: np.ndarray) -> np.ndarray:
    """One row of counts per η: a level's proportion Beta with mean ψ, variance
    η²ψ(1 − ψ) (binomial where η = 0)."""
    eta2 = np.minimum(etas ** 2, 0.95)[:, None]
    v = 1 / np.maximum(eta2, 1e-12) - 1
    p = np.where(eta2 > 0, rng.beta(psi * v, (1 - psi) * v), psi)
    return rng.binomial(n.astype(np.int64), p)


@dataclass(frozen=True)
class Outcome:
    """One simulated run: per method, whether the interval covers and its width over the
    true threshold (inf for an open end); reached False when the fit has no threshold;
    the fitted η and φ and whether X² says overdispersed."""

    reached: bool
    covers: tuple[bool, ...]
    widths: tuple[float, ...]
    eta: float
    phi: float = math.nan
    flagged: bool = False


def intervals(levels: np.ndarray, k: np.ndarray, n: np.ndarray, resamples: int,
              seed: int) -> tuple[dict[str, tuple[float, float]], float, Fit] | None:
    """The 95% intervals of one run, the fitted η and the fit; None when not reached."""
    draws = threshold_draws(levels, k, n, GUESS, resamples=resamples, seed=seed)
    found = draws.fit
    if found.threshold is None:
        return None
    lowest, highest = float(levels.min()), float(levels.max())
    data = _prepare(levels, k, n, GUESS, "weibull", CRITERION, (0.0, 0.1))
    theta = np.array([math.log(found.alpha), math.log(found.beta), found.lapse])
    psi = np.clip(GUESS + (1 - GUESS - found.lapse)
                  * -np.expm1(-(levels / found.alpha) ** found.beta), 1e-9, 1 - 1e-9)
    eta = fit_eta(k.astype(float), n.astype(float), psi)
    rng = np.random.default_rng([seed, 1])

    def refit(counts: np.ndarray) -> tuple[float, float]:
        thetas, converged = _refit_all(data, counts.astype(np.float64), theta)
        return threshold_interval(_criterion_levels(thetas[converged], CRITERION, data),
                                  lowest, highest)

    if eta > 0:
        v = 1 / eta ** 2 - 1
        p = rng.beta(psi * v, (1 - psi) * v, size=(resamples, len(levels)))
    else:
        p = np.tile(psi, (resamples, 1))
    beta_binomial = refit(rng.binomial(n.astype(np.int64), p))
    stimuli = refit(rng.binomial(n.astype(np.int64), k / n, size=(resamples, len(levels))))
    posterior = eta_posterior(k.astype(float), n.astype(float), psi)
    prior = refit(beta_binomial_counts(rng, n, psi, rng.choice(_ETA_GRID, resamples,
                                                               p=posterior)))
    current = threshold_interval(draws.thresholds, lowest, highest)
    fitted = threshold_draws(levels, k, n, GUESS, resamples=resamples, seed=seed,
                             dispersion="fitted")
    return {"current": current, "beta-binomial": beta_binomial, "η prior": prior,
            "stimuli": stimuli,
            "fitted": threshold_interval(fitted.thresholds, lowest, highest)}, eta, found


def one_run(args: tuple[float, str, int, int]) -> Outcome:
    tau, sharing, seed, resamples = args
    obs = observer(tau)
    levels = np.asarray(DEFAULT_LEVELS[FEATURE], dtype=float)
    rng = np.random.default_rng([seed, int(tau * 100), SHARING.index(sharing)])
    k = answers(obs, levels, TRIALS, sharing, rng)
    n = np.full(len(levels), TRIALS)
    true = obs.true_threshold()
    found = intervals(levels, k, n, resamples, seed)
    if found is None:
        return Outcome(False, (False,) * len(METHODS), (math.inf,) * len(METHODS), 0.0)
    ends, eta, done = found
    covers = tuple(bool(ends[m][0] <= true <= ends[m][1]) for m in METHODS)
    widths = tuple(float((ends[m][1] - ends[m][0]) / true) for m in METHODS)
    return Outcome(True, covers, widths, eta, done.dispersion or math.nan, done.overdispersed)


@dataclass(frozen=True)
class Cell:
    """Coverage and median width per method for one (sharing, τ), with Monte Carlo errors."""

    sharing: str
    tau: float
    runs: int
    reached: int
    coverage: tuple[float, ...]
    coverage_se: tuple[float, ...]
    width: tuple[float, ...]
    width_se: tuple[float, ...]
    median_eta: float
    median_phi: float
    flagged: float  # share of reached runs whose X² says overdispersed
    flagged_coverage: tuple[float, float]  # current and fitted, among the flagged runs


def summarise(sharing: str, tau: float, outcomes: list[Outcome], seed: int = 0) -> Cell:
    runs = len(outcomes)
    rng = np.random.default_rng(seed)
    coverage, coverage_se, width, width_se = [], [], [], []
    for i in range(len(METHODS)):
        c = float(np.mean([o.covers[i] for o in outcomes]))
        coverage.append(c)
        coverage_se.append(math.sqrt(c * (1 - c) / runs))
        w = np.asarray([o.widths[i] for o in outcomes if o.reached])
        width.append(float(np.median(w)) if len(w) else math.nan)
        medians = [np.median(rng.choice(w, len(w))) for _ in range(200)] if len(w) else []
        finite = [m for m in medians if np.isfinite(m)]
        width_se.append(float(np.std(finite)) if len(finite) > 1 else math.nan)
    done = [o for o in outcomes if o.reached]
    return Cell(sharing, tau, runs, len(done), tuple(coverage), tuple(coverage_se),
                tuple(width), tuple(width_se),
                float(np.median([o.eta for o in done])) if done else math.nan,
                float(np.median([o.phi for o in done])) if done else math.nan,
                float(np.mean([o.flagged for o in done])) if done else math.nan,
                _flagged_coverage(done))


def _flagged_coverage(done: list[Outcome]) -> tuple[float, float]:
    flagged = [o for o in done if o.flagged]
    if not flagged:
        return math.nan, math.nan
    return tuple(float(np.mean([o.covers[METHODS.index(m)] for o in flagged]))
                 for m in ("current", "fitted"))  # type: ignore[return-value]


def measure(runs: int, resamples: int, workers: int, taus: tuple[float, ...] = TAUS,
            sharings: tuple[str, ...] = SHARING,
            mapper: Callable | None = None) -> list[Cell]:
    cells = []
    if mapper is not None:
        return [summarise(s, t, list(mapper(one_run, [(t, s, seed, resamples)
                                                       for seed in range(runs)])))
                for s in sharings for t in taus]
    with ProcessPoolExecutor(workers) as pool:
        for sharing in sharings:
            for tau in taus:
                jobs = [(tau, sharing, seed, resamples) for seed in range(runs)]
                cells.append(summarise(sharing, tau, list(pool.map(one_run, jobs,
                                                                   chunksize=8))))
                print(row(cells[-1]), flush=True)
    return cells


def row(cell: Cell) -> str:
    parts = [f"| {cell.sharing} | {cell.tau:g} | {cell.reached}/{cell.runs} |"]
    for i in range(len(METHODS)):
        low = " **<93%**" if cell.coverage[i] < 0.93 else ""
        parts.append(f" {100 * cell.coverage[i]:.1f} ± {100 * cell.coverage_se[i]:.1f}%{low} |")
    for i in range(len(METHODS)):
        parts.append(f" {100 * cell.width[i]:.0f} ± {100 * cell.width_se[i]:.0f}% |")
    flagged = round(cell.flagged * cell.reached)
    parts.append(f" {cell.median_eta:.2f} | {cell.median_phi:.2f} | "
                 f"{100 * cell.flagged:.0f}% |")
    parts.extend(f" {100 * c:.0f}% of {flagged} |" if flagged else " - |"
                 for c in cell.flagged_coverage)
    return "".join(parts)


def header() -> str:
    names = " | ".join(f"coverage, {m}" for m in METHODS)
    widths = " | ".join(f"width, {m}" for m in METHODS)
    columns = 3 + 2 * len(METHODS) + 5
    return (f"| stimuli differ at | τ | reached | {names} | {widths} | median η | median φ "
            "| X² p < 0.05 | coverage there, current | coverage there, fitted |\n"
            + "|---" * columns + "|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--taus", type=float, nargs="+", default=list(TAUS))
    parser.add_argument("--sharing", choices=SHARING, nargs="+", default=list(SHARING))
    args = parser.parse_args()
    obs = observer(0.0)
    print(f"{FEATURE}: α={obs.alpha:g} β={obs.beta:g} λ={obs.lapse:g}, levels "
          f"{DEFAULT_LEVELS[FEATURE]}, {TRIALS} trials each; {args.runs} runs, "
          f"{args.resamples} refits; widths over the true threshold")
    print(header())
    measure(args.runs, args.resamples, args.workers, tuple(args.taus), tuple(args.sharing))


if __name__ == "__main__":
    main()
