"""How often the bootstrap 95% interval of Krippendorff's alpha holds the true alpha, for
simulated raters of known agreement, by interval method: the percentile interval, the
bias-corrected and accelerated (BCa) interval (Efron 1987; acceleration from the jackknife
over units) and the studentized (bootstrap-t) interval with a jackknife standard error
inside each resample (`stats.agreement.studentized`, what visioneval uses under 60 units).
All resample units (cases), as `stats.agreement` does.

Raters score a case as its latent value plus independent noise: latent ~ N(0, 2^2), noise
~ N(0, 1.5^2). On the interval scale the true alpha is 4 / (4 + 2.25) = 0.64 (alpha's
population value is the intraclass correlation var(latent) / var(rating)). The 0-10 scores
are 5 + the rating, rounded and clipped, like a rubric's scores; their true alpha, interval
and ordinal, is alpha on one sample of 20,000 cases x the same raters.

    uv run python measure/alpha_coverage.py                  # 1000 samples a setting
    uv run python measure/alpha_coverage.py --samples 200    # quicker, wider error bars

The ordinal rows take half the samples, the 10 x 200 row a fifth.

Coverage is printed with its Monte Carlo standard error, sqrt(p (1 - p) / samples).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import norm

from visioneval.stats.agreement import Pairable, krippendorff_alpha, resample_counts
from visioneval.stats.agreement import studentized as visioneval_studentized

RESAMPLES = 1000
LATENT_SD, NOISE_SD = 2.0, 1.5
# (raters, units, share of ratings missing)
SETTINGS = ((5, 15, 0.0), (2, 20, 0.0), (4, 40, 0.25), (2, 30, 0.0), (3, 60, 0.0),
            (2, 100, 0.0), (10, 200, 0.0))
SCALES = (("continuous", "interval"), ("0-10 scores", "interval"), ("0-10 scores", "ordinal"))


def ratings(rng: np.random.Generator, raters: int, units: int, missing: float,
            scale: str) -> np.ndarray:
    latent = rng.normal(0, LATENT_SD, units)
    data = latent + rng.normal(0, NOISE_SD, (raters, units))
    if scale == "0-10 scores":
        data = np.clip(np.round(5 + data), 0, 10)
    if missing:
        data[rng.random(data.shape) < missing] = np.nan
    return data


def true_alpha(raters: int, scale: str, level: str) -> float:
    if scale == "continuous":
        return LATENT_SD ** 2 / (LATENT_SD ** 2 + NOISE_SD ** 2)
    big = ratings(np.random.default_rng(12345), raters, 20_000, 0.0, scale)
    value = krippendorff_alpha(big, level)  # type: ignore[arg-type]
    assert value is not None
    return value


def jackknife(units: Pairable) -> np.ndarray:
    """Alpha with each unit left out in turn."""
    return units.alphas(1 - np.eye(units.units))


def bca(alpha: float, found: np.ndarray, leave_one_out: np.ndarray) -> tuple[float, float]:
    below = (np.sum(found < alpha) + 0.5 * np.sum(found == alpha)) / len(found)
    z0 = norm.ppf(below)
    loo = leave_one_out[~np.isnan(leave_one_out)]
    d = loo.mean() - loo
    spread = np.sum(d ** 2)
    a = np.sum(d ** 3) / (6 * spread ** 1.5) if spread > 0 else 0.0
    z = norm.ppf([0.025, 0.975])
    shares = norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    low, high = np.quantile(found, shares)
    return float(low), float(high)


def intervals(data: np.ndarray, level: str, seed: int, studentized: bool
              ) -> dict[str, tuple[float, float]]:
    units = Pairable(data, level)  # type: ignore[arg-type]
    alpha = float(units.alphas(np.ones((1, units.units)))[0])
    counts = resample_counts(np.random.default_rng(seed), units.units, RESAMPLES)
    found = units.alphas(counts)
    ok = ~np.isnan(found)
    found, counts = found[ok], counts[ok]
    out = {"percentile": tuple(np.percentile(found, [2.5, 97.5]))}
    out["BCa"] = bca(alpha, found, jackknife(units))
    if studentized:
        found_t = visioneval_studentized(units, alpha, counts, found)
        out["studentized"] = found_t if found_t is not None else out["percentile"]
    return {k: (float(v[0]), float(v[1])) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--studentized-below", type=int, default=60,
                        help="studentized interval only for fewer units (it costs units x more)")
    args = parser.parse_args()
    print(f"{args.samples} samples a setting, {RESAMPLES} resamples each; coverage % "
          "(Monte Carlo standard error)")
    print("| raters x units | missing | scale | level | true alpha | percentile | BCa "
          "| studentized |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for raters, n, missing in SETTINGS:
        for scale, level in SCALES:
            if n >= 200 and scale != "continuous":
                continue
            truth = true_alpha(raters, scale, level)
            hits: dict[str, int] = {}
            started = time.perf_counter()
            samples = args.samples if n < 200 else max(args.samples // 5, 50)
            if level == "ordinal":  # ranks are recomputed per left-out case: slower
                samples = max(args.samples // 2, 50)
            for sample in range(samples):
                rng = np.random.default_rng(10_000 * n + 100 * raters + sample)
                data = ratings(rng, raters, n, missing, scale)
                found = intervals(data, level, sample, n < args.studentized_below)
                for method, (low, high) in found.items():
                    hits[method] = hits.get(method, 0) + (low <= truth <= high)
            cells = []
            for method in ("percentile", "BCa", "studentized"):
                if method not in hits:
                    cells.append("-")
                    continue
                p = hits[method] / samples
                cells.append(f"{100 * p:.1f} ({100 * math.sqrt(p * (1 - p) / samples):.1f})")
            print(f"| {raters} x {n} | {missing:.0%} | {scale} | {level} | {truth:.3f} | "
                  f"{' | '.join(cells)} |  <!-- {samples} samples, "
                  f"{time.perf_counter() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
