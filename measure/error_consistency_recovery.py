"""How well error consistency (Geirhos, Meding & Wichmann 2020) is recovered from 50 to 500
trials: the median error of kappa, the coverage of six 95% intervals, and how often the
paper's binomial test of c_obs against c_exp rejects at 5%, for two simulated observers of
known kappa.

The observers share an error process. Each trial is hard with probability h. Observer a
errs on an easy trial with probability E_a (1 - h s) and on a hard one with that plus E_a s;
b likewise with E_b; independently given the trial. Each then errs on E of all trials
whatever s is (accuracy 1 - E), and the error probabilities of a and b covary over trials
by h (1 - h) E_a E_b s^2. c_obs - c_exp is twice that covariance and 1 - c_exp is
E_a (1 - E_b) + E_b (1 - E_a), so the true kappa is

    kappa = 2 h (1 - h) E_a E_b s^2 / (E_a (1 - E_b) + E_b (1 - E_a)),

s = 0 being two independent observers (kappa 0); s is solved for each kappa asked, and the
script checks the kappa of the resulting table of shares. Trials are independent, so a
run's counts of the four kinds of trial (both right, only a right, only b right, both
wrong) are one multinomial draw: the simulation draws those counts directly, as
trial-by-trial draws would give them.

Settings: "alike" (h 0.3, both 75% right) and "near ceiling" (h 0.1, a 95% right and b 90%:
a model and a person on easy stimuli; about 2 and 5 errors in 50 trials).

Intervals (1000 bootstrap resamples over trials each): percentile; BCa (Efron 1987,
acceleration from the jackknife over trials); bootstrap-t, each resample studentized by the
large-sample standard error of kappa (Fleiss, Cohen & Everitt 1969); Wald (kappa +- 1.96
that standard error), and the same with half a trial added to each kind; and the smoothed
percentile interval `visioneval.stats.error_consistency` uses (`smoothed_interval`).
Coverage is over the runs that have an interval (Monte Carlo standard error about 0.7
points at 1000 runs); in brackets the share of runs without one (kappa undefined: no error
by either, or too few resamples with a kappa).

    uv run python measure/error_consistency_recovery.py                # 1000 runs a row
    uv run python measure/error_consistency_recovery.py --runs 200     # quicker
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import norm

from visioneval.stats.error_consistency import (
    binomial_p,
    kappa_of,
    kappa_se,
    resample_cells,
    smoothed_interval,
)

RESAMPLES = 1000
TRIALS = (50, 100, 200, 500)
KAPPAS = (0.0, 0.2, 0.5)
# name: (h, e_a, e_b)
SETTINGS = {"alike": (0.3, 0.25, 0.25), "near ceiling": (0.1, 0.05, 0.10)}
METHODS = ("percentile", "BCa", "bootstrap-t", "Wald", "Wald +0.5", "smoothed (visioneval)")
TAIL = 0.025


def spread_for(h: float, err_a: float, err_b: float, kappa: float) -> float:
    """s of the true kappa asked: kappa = 2 h (1 - h) E_a E_b s^2 / D."""
    both = err_a * (1 - err_b) + err_b * (1 - err_a)
    s = math.sqrt(kappa * both / (2 * h * (1 - h) * err_a * err_b))
    if h * s > 1:
        raise ValueError(f"kappa {kappa} is out of reach with h {h}, errors {err_a}, {err_b}")
    return s


def true_kappa(shares: np.ndarray) -> float:
    return float(kappa_of(shares))


def cell_shares(h: float, err_a: float, err_b: float, s: float) -> np.ndarray:
    """P(both right), P(only a right), P(only b right), P(both wrong) of one trial."""
    shares = np.zeros(4)
    hard = [(e * (1 - h * s) + e * s, e * (1 - h * s)) for e in (err_a, err_b)]
    for k, weight in enumerate((h, 1 - h)):
        e_a, e_b = hard[0][k], hard[1][k]
        shares += weight * np.array([(1 - e_a) * (1 - e_b), (1 - e_a) * e_b,
                                     e_a * (1 - e_b), e_a * e_b])
    return shares


def column_quantile(values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantile q[j] of column j's finite values (linear interpolation); NaN if none."""
    ordered = np.sort(np.where(np.isfinite(values), values, np.inf), axis=0)
    count = np.isfinite(values).sum(axis=0)
    q = np.where(np.isfinite(q), q, 0.5)
    at = np.clip(q, 0, 1) * np.maximum(count - 1, 0)
    below = np.floor(at).astype(int)
    above = np.minimum(below + 1, np.maximum(count - 1, 0))
    cols = np.arange(values.shape[1])
    low, high = ordered[below, cols], ordered[above, cols]
    with np.errstate(invalid="ignore"):
        out = low + (at - below) * (high - low)
    return np.where(count > 0, out, np.nan)


def bootstrap_t(cells: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(runs, 2): kappa - t_97.5% se to kappa - t_2.5% se, each resample's t studentized by
    its own standard error; none where fewer than 95% of the resamples have a t."""
    kappa, se = kappa_of(cells), kappa_se(cells)
    drawn = resample_cells(cells, RESAMPLES, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (kappa_of(drawn) - kappa) / kappa_se(drawn)
    usable = np.isfinite(t)
    low_t = column_quantile(t, np.full(len(cells), TAIL))
    high_t = column_quantile(t, np.full(len(cells), 1 - TAIL))
    ok = (usable.mean(axis=0) >= 0.95) & np.isfinite(kappa) & (se > 0)
    return np.where(ok[:, None], np.stack([np.clip(kappa - high_t * se, -1, 1),
                                           np.clip(kappa - low_t * se, -1, 1)], axis=1),
                    np.nan)


def intervals(cells: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each method's (runs, 2) intervals; NaN rows where a method gives none."""
    kappa, se = kappa_of(cells), kappa_se(cells)
    boot = kappa_of(resample_cells(cells, RESAMPLES, rng))  # (resamples, runs)
    defined = np.isfinite(boot)
    enough = (defined.mean(axis=0) >= 0.95) & np.isfinite(kappa) & (se > 0)
    out: dict[str, np.ndarray] = {}
    low = column_quantile(boot, np.full(len(cells), TAIL))
    high = column_quantile(boot, np.full(len(cells), 1 - TAIL))
    out["percentile"] = np.where(enough[:, None], np.stack([low, high], axis=1), np.nan)

    # BCa: bias from the share of resamples below kappa, acceleration from the jackknife
    # over trials (a trial of each kind left out; four distinct values, weighted by count).
    with np.errstate(invalid="ignore", divide="ignore"):
        below = ((boot < kappa) + 0.5 * (boot == kappa)).sum(axis=0) / defined.sum(axis=0)
        z0 = norm.ppf(np.clip(below, 1e-6, 1 - 1e-6))
        left = np.stack([kappa_of(cells - np.eye(4, dtype=np.int64)[k]) for k in range(4)],
                        axis=1)
        weight = np.where(cells > 0, cells, 0) * np.isfinite(left)
        filled = np.where(np.isfinite(left), left, 0.0)
        mean = (weight * filled).sum(axis=1) / weight.sum(axis=1)
        spread = mean[:, None] - filled
        accel = (weight * spread ** 3).sum(axis=1) / (
            6 * ((weight * spread ** 2).sum(axis=1)) ** 1.5)
        accel = np.where(np.isfinite(accel), accel, 0.0)
        ends = []
        for z in (norm.ppf(TAIL), norm.ppf(1 - TAIL)):
            ends.append(column_quantile(boot, norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))))
    out["BCa"] = np.where(enough[:, None], np.stack(ends, axis=1), np.nan)
    out["bootstrap-t"] = bootstrap_t(cells, rng)
    z = norm.ppf(1 - TAIL)
    for name, added in (("Wald", 0.0), ("Wald +0.5", 0.5)):
        kappa, se = kappa_of(cells + added), kappa_se(cells + added)
        wald = np.stack([np.clip(kappa - z * se, -1, 1), np.clip(kappa + z * se, -1, 1)],
                        axis=1)
        out[name] = np.where((np.isfinite(kappa) & (se > 0))[:, None], wald, np.nan)
    out["smoothed (visioneval)"] = np.where(np.isfinite(kappa_of(cells))[:, None],
                                            smoothed_interval(cells, RESAMPLES, rng=rng),
                                            np.nan)
    return out


def row(setting: str, kappa: float, n: int, runs: int, rng: np.random.Generator) -> str:
    h, err_a, err_b = SETTINGS[setting]
    shares = cell_shares(h, err_a, err_b, spread_for(h, err_a, err_b, kappa))
    assert abs(true_kappa(shares) - kappa) < 1e-9
    cells = rng.multinomial(n, shares, size=runs)
    found = kappa_of(cells)
    defined = np.isfinite(found)
    error = found[defined] - kappa
    accuracy = (shares[0] + shares[1], shares[0] + shares[2])
    parts = [f"| {setting} | {100 * accuracy[0]:.0f}/{100 * accuracy[1]:.0f} | {kappa:.1f} "
             f"| {n} | {np.median(error):+.3f} | {np.median(np.abs(error)):.3f}"]
    for bounds in intervals(cells, rng).values():
        has = np.isfinite(bounds[:, 0])
        held = (bounds[has, 0] <= kappa) & (kappa <= bounds[has, 1])
        width = np.median(bounds[has, 1] - bounds[has, 0]) if has.any() else np.nan
        parts.append(f"{100 * held.mean():.1f} ({100 * (1 - has.mean()):.0f}) w {width:.2f}"
                     if has.any() else "- (100)")
    p = binomial_p(cells[:, 0] + cells[:, 3], n,
                   (cells[:, 0] + cells[:, 1]) / n * (cells[:, 0] + cells[:, 2]) / n
                   + (cells[:, 3] + cells[:, 2]) / n * (cells[:, 3] + cells[:, 1]) / n)
    parts.append(f"{100 * np.mean(p[defined] < 0.05):.1f}")
    return " | ".join(parts) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="simulated runs a row")
    parser.add_argument("--seed", type=int, default=2020)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"{args.runs} simulated runs a row, {RESAMPLES} bootstrap resamples each. "
          "Coverage % (share without an interval %) w median width.")
    print("| setting | accuracy a/b % | kappa | trials | median error | median abs. error | "
          + " | ".join(METHODS) + " | binomial test rejects % |")
    print("|" + "---|" * (7 + len(METHODS)))
    for setting in SETTINGS:
        for kappa in KAPPAS:
            for n in TRIALS:
                print(row(setting, kappa, n, args.runs, rng), flush=True)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
