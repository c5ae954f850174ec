"""How many samples a comparison of two accuracies needs, and the smallest difference a run of
n samples detects: two-sided tests at level alpha with the given power, normal
approximations.

- Paired (two models on the same samples, `visioneval compare`'s McNemar test): Connor
  (1987), "Sample size for testing differences in proportions for the paired-sample design",
  Biometrics 43(1):207-211. With discordance psi = p10 + p01 (the share of samples where
  exactly one model is right) and difference d = p01 - p10,
  n = (z_{1-a/2} sqrt(psi) + z_{1-b} sqrt(psi - d^2))^2 / d^2.
  Only psi and d enter; the baseline bounds what is possible (`feasible`).
- Unpaired (two independent samples of n each): Fleiss, Levin & Paik (2003), "Statistical
  Methods for Rates and Proportions", 3rd ed., section 4.2, without the continuity
  correction, the variance pooled under the null:
  n = (z_{1-a/2} sqrt(2 pbar qbar) + z_{1-b} sqrt(p1 q1 + p2 q2))^2 / d^2, pbar = (p1+p2)/2.
  statsmodels' `samplesize_proportions_2indep_onetail` gives the same n (docs/decisions.md).

The detectable difference at n is the d whose required n equals n (a root of a monotone
function, found with scipy's brentq). Power is the probability of the tail the true
difference lies on (the other tail adds under 0.1% at the powers used here).
"""

# Imports inside functions: scipy loads when a power is computed, so `visioneval power`
# refuses a wrong option at once.

from __future__ import annotations

import math

ALPHA = 0.05
POWER = 0.8


def _z(alpha: float, power: float) -> tuple[float, float]:
    from scipy.stats import norm

    return float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))


def n_paired(difference: float, discordance: float, alpha: float = ALPHA,
             power: float = POWER) -> float:
    """Connor's (1987) samples for McNemar's test (not rounded up). The difference must be
    smaller than the discordance: d = p01 - p10 and psi = p01 + p10."""
    d, psi = abs(difference), discordance
    if not 0 < d < psi <= 1:
        raise ValueError(f"a paired difference of {d:g} needs a discordance above it "
                         f"and at most 1 (given {psi:g})")
    za, zb = _z(alpha, power)
    return (za * math.sqrt(psi) + zb * math.sqrt(psi - d * d)) ** 2 / (d * d)


def n_unpaired(difference: float, baseline: float, alpha: float = ALPHA,
               power: float = POWER) -> float:
    """Fleiss, Levin & Paik's samples per model for two independent proportions (baseline,
    baseline + difference), not rounded up."""
    p1, p2 = baseline, baseline + difference
    if difference == 0 or not (0 <= p1 <= 1 and 0 <= p2 <= 1):
        raise ValueError(f"a difference of {difference:+g} from a baseline of {baseline:g} "
                         "is not a change between two proportions")
    za, zb = _z(alpha, power)
    pbar = (p1 + p2) / 2
    spread = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return (za * math.sqrt(2 * pbar * (1 - pbar)) + zb * spread) ** 2 / difference ** 2


def power_paired(n: float, difference: float, discordance: float,
                 alpha: float = ALPHA) -> float:
    """The power of McNemar's test at n (Connor's approximation, the nearer tail)."""
    from scipy.stats import norm

    d, psi = abs(difference), discordance
    za = float(norm.ppf(1 - alpha / 2))
    return float(norm.cdf((d * math.sqrt(n) - za * math.sqrt(psi)) / math.sqrt(psi - d * d)))


def power_unpaired(n: float, difference: float, baseline: float,
                   alpha: float = ALPHA) -> float:
    """The power of the two-proportion z-test at n per model (Fleiss, the nearer tail)."""
    from scipy.stats import norm

    p1, p2 = baseline, baseline + difference
    za = float(norm.ppf(1 - alpha / 2))
    pbar = (p1 + p2) / 2
    spread = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return float(norm.cdf((abs(difference) * math.sqrt(n)
                           - za * math.sqrt(2 * pbar * (1 - pbar))) / spread))


def detectable_paired(n: int, discordance: float, alpha: float = ALPHA,
                      power: float = POWER) -> float | None:
    """The smallest |p01 - p10| that McNemar's test detects at n with this power; None when
    even a difference as large as the discordance is not detected."""
    from scipy.optimize import brentq

    top = discordance * (1 - 1e-9)
    if n <= 0 or discordance <= 0 or n_paired(top, discordance, alpha, power) > n:
        return None
    return float(brentq(lambda d: n_paired(d, discordance, alpha, power) - n,
                        1e-9, top, xtol=1e-10))


def detectable_unpaired(n: int, baseline: float, alpha: float = ALPHA,
                        power: float = POWER) -> tuple[float, int] | None:
    """The smallest difference from the baseline detected at n per model, and its sign: the
    larger of the rise and the fall that are detected (the harder direction, so both are);
    None when neither direction can be detected."""
    from scipy.optimize import brentq

    found: list[float | None] = []
    for sign, room in ((1, 1 - baseline), (-1, baseline)):
        top = room * (1 - 1e-9)
        if n <= 0 or top <= 0 or n_unpaired(sign * top, baseline, alpha, power) > n:
            found.append(None)
            continue
        found.append(float(brentq(
            lambda d, s=sign: n_unpaired(s * d, baseline, alpha, power) - n,
            1e-9, top, xtol=1e-10)))
    rise, fall = found
    if rise is None and fall is None:
        return None
    if rise is None or (fall is not None and fall > rise):
        assert fall is not None
        return fall, -1
    return rise, 1


def independent_discordance(baseline: float) -> float:
    """The discordance two models of this accuracy would have if their errors were
    independent, 2 p (1 - p): an upper bound when their errors are positively correlated,
    as two models' on one benchmark usually are (they find the same samples hard)."""
    return 2 * baseline * (1 - baseline)


def feasible(baseline: float, difference: float, discordance: float) -> str | None:
    """Why a difference of this size (either sign) cannot go with this discordance when the
    first model's accuracy is the baseline (one line), or None. The joint distribution needs
    p01 = (psi + d)/2 within the first model's errors and p10 = (psi - d)/2 within its right
    answers, so |d| lies between psi - 2 min(p, 1 - p) and 2 max(p, 1 - p) - psi (never
    empty: their gap is 2 (1 - psi))."""
    d, psi, p = abs(difference), discordance, baseline
    low, high = max(0.0, psi - 2 * min(p, 1 - p)), min(psi, 2 * max(p, 1 - p) - psi)
    if low - 1e-12 <= d <= high + 1e-12:
        return None
    return (f"a discordance of {psi:.3f} at a baseline of {100 * p:.1f}% means the models "
            f"differ by {100 * low:.1f} to {100 * high:.1f} points, not "
            f"{100 * d:.1f}")


def power_paired_exact(n: int, difference: float, discordance: float,
                       alpha: float = ALPHA) -> float:
    """The power of McNemar's exact (conditional binomial) test, which `visioneval compare`
    reports, computed exactly: the m discordant samples are Binomial(n, psi); given m, the
    test rejects when the smaller count is at most the largest k whose two-sided binomial
    p-value, 2 P(X <= k | m, 1/2), is below alpha; the counts follow Binomial(m, p01/psi).
    Below Connor's normal figure at small n (the exact test is conservative)."""
    import numpy as np
    from scipy.stats import binom

    d, psi = abs(difference), discordance
    m = np.arange(n + 1)
    k = binom.ppf(alpha / 2, m, 0.5)  # the smallest k with P(X <= k) >= alpha / 2
    k = np.where(2 * binom.cdf(k, m, 0.5) < alpha, k, k - 1)  # the test's p is below alpha
    q = (psi + d) / (2 * psi)  # P(only the second model is right | discordant)
    reject = np.where(k >= 0, binom.cdf(k, m, 1 - q) + binom.cdf(k, m, q), 0.0)
    return float(np.clip((binom.pmf(m, n, psi) * reject).sum(), 0.0, 1.0))
