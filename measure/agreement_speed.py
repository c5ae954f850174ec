"""What 1000 bootstrap resamples of Krippendorff's alpha cost: the `krippendorff` package
called once per resample against `stats.agreement` (per-unit sums, all resamples of a batch
at once), on judge-like scores: integers 0-10 (one dimension's scores) and fractions (means
over human raters, weighted rubric scores), 10 raters x 200 units and 2 x 30 (a judge against
human scores). The largest difference between the two alphas over the resamples is printed
too: the two must agree.

    uv run python measure/agreement_speed.py            # package timed on 1000 resamples
    uv run python measure/agreement_speed.py --quick    # package on 20, scaled to 1000
"""

from __future__ import annotations

import argparse
import time

import krippendorff
import numpy as np

from visioneval.stats.agreement import Pairable, agreement, resample_counts

RESAMPLES = 1000


def scores(raters: int, units: int, fractional: bool, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 10, units)
    noisy = np.clip(truth + rng.normal(0, 2, (raters, units)), 0, 10)
    return noisy if fractional else np.round(noisy)


def package_time(data: np.ndarray, level: str, calls: int) -> tuple[float, float]:
    """(seconds for `calls` resamples scaled to 1000, largest |package - ours|)."""
    units = Pairable(data, level)  # type: ignore[arg-type]
    counts = resample_counts(np.random.default_rng(0), data.shape[1], calls)
    ours = units.alphas(counts)
    columns = [np.repeat(np.arange(data.shape[1]), c.astype(int)) for c in counts]
    started = time.perf_counter()
    theirs = [krippendorff.alpha(reliability_data=data[:, cols], level_of_measurement=level)
              for cols in columns]
    spent = time.perf_counter() - started
    return spent * RESAMPLES / calls, float(np.nanmax(np.abs(np.array(theirs) - ours)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    print(f"| raters x units | scores | level | package, {RESAMPLES} resamples s "
          "| stats.agreement s | largest difference |")
    print("|---|---|---|---:|---:|---:|")
    for raters, units in ((10, 200), (2, 30), (2, 200)):
        for fractional in (False, True):
            data = scores(raters, units, fractional)
            for level in ("interval", "ordinal"):
                slow = fractional and raters * units > 100
                calls = 3 if slow else (20 if quick else RESAMPLES)
                theirs, diff = package_time(data, level, calls)
                started = time.perf_counter()
                agreement(data, level, RESAMPLES)  # type: ignore[arg-type]
                ours = time.perf_counter() - started
                kind = "fractions" if fractional else "integers"
                scaled = " (3 timed)" if slow else ""
                print(f"| {raters} x {units} | {kind} | {level} | {theirs:.2f}{scaled} "
                      f"| {ours:.3f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
