"""Does `visioneval power` keep its promise? Two simulated models of known accuracy answer n
samples; model A is right with probability 0.70 and model B differs from it by exactly the
difference `power` says n detects. Over REPS seeded replications, the share of runs in which
the test finds the difference should be the stated power (0.8).

- paired: each sample's pair of outcomes is drawn from the joint distribution with the given
  discordance psi (p01 = (psi + d) / 2 where only B is right, p10 = (psi - d) / 2 where only
  A is), then McNemar's test: the asymptotic z-test that Connor's formula describes, and the
  exact binomial test `visioneval compare` reports (more conservative at small n).
- unpaired: A and B answer different samples; the pooled two-proportion z-test.
- the exact test's power computed (`power_paired_exact`, what `power` prints beside the
  table) against the simulated rate, and the n at which the exact test reaches 0.8.
- the inverse: the n `power --difference` asks for a target difference detects it at the
  stated power, and n -> detectable difference -> n returns n.

    uv run python measure/power_validation.py            # about 10 s
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom, norm

from visioneval.stats import power

REPS = 4000
ALPHA, POWER, BASELINE = 0.05, 0.8, 0.70
Z = float(norm.ppf(1 - ALPHA / 2))


def paired_rates(n: int, d: float, psi: float, seed: int) -> tuple[float, float]:
    """(asymptotic McNemar, exact McNemar) rejection rates over REPS replications."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, [(psi - d) / 2, (psi + d) / 2, 1 - psi], size=REPS)
    only_a, only_b = counts[:, 0], counts[:, 1]
    discordant = only_a + only_b
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(discordant > 0, (only_b - only_a) / np.sqrt(discordant), 0.0)
    exact_p = np.minimum(1.0, 2 * binom.cdf(np.minimum(only_a, only_b), discordant, 0.5))
    return float((np.abs(z) > Z).mean()), float((exact_p < ALPHA).mean())


def unpaired_rate(n: int, d: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    a = rng.binomial(n, BASELINE, size=REPS) / n
    b = rng.binomial(n, BASELINE + d, size=REPS) / n
    pooled = (a + b) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(pooled * (1 - pooled) > 0,
                     (b - a) / np.sqrt(2 * pooled * (1 - pooled) / n), 0.0)
    return float((np.abs(z) > Z).mean())


def exact_n(start: int, d: float, psi: float) -> int:
    """The smallest n from `start` at which McNemar's exact test has the stated power."""
    n = start
    while power.power_paired_exact(n, d, psi, ALPHA) < POWER:
        n += 1
    return n


def band() -> float:
    """Two standard errors of a simulated rate of 0.8 over REPS replications."""
    return 2 * math.sqrt(POWER * (1 - POWER) / REPS)


def main() -> None:
    print(f"A right with p = {BASELINE}; alpha {ALPHA} two-sided; power {POWER}; {REPS} "
          f"replications each (a rate of 0.8 has a 2-SE band of +-{band():.3f})")
    print("\npaired: B differs by the detectable difference at n (McNemar)")
    print(f"{'n':>6} {'discordance':>11} {'detectable':>10} {'z-test':>7} {'exact':>7} "
          f"{'exact, computed':>15} {'n for exact':>11}")
    for seed, (n, psi) in enumerate([(100, 0.15), (100, 0.30), (300, 0.15), (300, 0.30),
                                     (1000, 0.15), (1000, 0.30), (3000, 0.30)]):
        d = power.detectable_paired(n, psi, ALPHA, POWER)
        assert d is not None and power.feasible(BASELINE, d, psi) is None
        z_rate, exact_rate = paired_rates(n, d, psi, seed)
        computed = power.power_paired_exact(n, d, psi, ALPHA)
        print(f"{n:>6} {psi:>11.2f} {100 * d:>8.1f}pt {z_rate:>7.3f} {exact_rate:>7.3f} "
              f"{computed:>15.3f} {exact_n(n, d, psi):>11}")

    print("\nunpaired: B = A's accuracy minus the detectable difference at n per model")
    print(f"{'n':>6} {'detectable':>10} {'z-test':>7}")
    for seed, n in enumerate([100, 300, 1000, 3000], start=100):
        found = power.detectable_unpaired(n, BASELINE, ALPHA, POWER)
        assert found is not None
        d, sign = found
        print(f"{n:>6} {100 * d:>8.1f}pt {unpaired_rate(n, sign * d, seed):>7.3f}")

    print("\nthe inverse: n for a target difference, then simulated at that n")
    print(f"{'design':>8} {'difference':>10} {'discordance':>11} {'n':>6} {'rate':>6} "
          f"{'round trip':>10}")
    for seed, (d, psi) in enumerate([(0.05, 0.20), (0.03, 0.10), (0.10, 0.40)], start=200):
        n = math.ceil(power.n_paired(d, psi, ALPHA, POWER))
        back = power.n_paired(power.detectable_paired(n, psi, ALPHA, POWER) or 0, psi)
        print(f"{'paired':>8} {100 * d:>8.1f}pt {psi:>11.2f} {n:>6} "
              f"{paired_rates(n, d, psi, seed)[0]:>6.3f} {back:>10.1f}")
    for seed, d in enumerate([0.05, 0.10], start=300):
        n = math.ceil(power.n_unpaired(-d, BASELINE, ALPHA, POWER))
        found = power.detectable_unpaired(n, BASELINE, ALPHA, POWER)
        back = power.n_unpaired(-found[0], BASELINE) if found else float("nan")
        print(f"{'unpaired':>8} {100 * d:>8.1f}pt {'-':>11} {n:>6} "
              f"{unpaired_rate(n, -d, seed):>6.3f} {back:>10.1f}")


if __name__ == "__main__":
    main()
