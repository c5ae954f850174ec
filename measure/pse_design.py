"""How a constant-stimuli design of a comparison paradigm fares with `fit_pse`, before any
image is drawn: a simulated observer with a known PSE, JND and lapse answers at evenly
spaced levels symmetric about 0 (`--count` levels `--step` apart, `--trials` each), each
run is fitted as a paradigm's run is (1000 parametric-bootstrap refits from the run's seed
0), and the coverage of the true PSE and JND by the 95% intervals (an open end counts as
infinite) and the median errors are counted over the runs. measure/paradigm_recovery.py
then checks the chosen design through the whole path (images, HTTP, the fits per curve).

    uv run python measure/pse_design.py --step 6 --count 9 --trials 16 --jnd 6 --runs 600
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.stats import norm

from visioneval.stats.pse_fit import JND_Z, fit_pse

Interval = tuple[float | None, float | None] | None
Outcome = tuple[float | None, Interval, float | None, Interval]


def one_run(args: tuple[list[float], int, float, float, float, int]) -> Outcome:
    levels, trials, pse, jnd, lapse, seed = args
    x = np.asarray(levels)
    p = lapse + (1 - 2 * lapse) * norm.cdf((x - pse) / (jnd / JND_Z))
    k = np.random.default_rng(seed).binomial(trials, p)
    found = fit_pse(levels, list(k), [trials] * len(levels), resamples=1000, seed=0)
    return found.pse, found.pse_ci, found.jnd, found.jnd_ci


def covers(interval: Interval, truth: float) -> bool:
    if interval is None:
        return False
    low = -math.inf if interval[0] is None else interval[0]
    high = math.inf if interval[1] is None else interval[1]
    return low <= truth <= high


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=float, required=True)
    parser.add_argument("--count", type=int, required=True, help="levels (odd: 0 among them)")
    parser.add_argument("--trials", type=int, required=True, help="trials a level")
    parser.add_argument("--pse", type=float, default=0.0)
    parser.add_argument("--jnd", type=float, required=True)
    parser.add_argument("--lapse", type=float, default=0.02)
    parser.add_argument("--runs", type=int, default=600)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    levels = [args.step * (i - (args.count - 1) / 2) for i in range(args.count)]
    jobs = [(levels, args.trials, args.pse, args.jnd, args.lapse, run)
            for run in range(args.runs)]
    with ProcessPoolExecutor(args.workers) as pool:
        found = list(pool.map(one_run, jobs, chunksize=8))
    runs = len(found)

    def share(hits: int) -> str:
        c = hits / runs
        return f"{100 * c:.1f} ± {100 * math.sqrt(c * (1 - c) / runs):.1f}%"

    pses = [f[0] - args.pse for f in found if f[0] is not None]
    jnds = [f[2] / args.jnd - 1 for f in found if f[2] is not None]
    print(f"| {args.count} x {args.trials}, ±{max(levels):g} in steps of {args.step:g} | "
          f"PSE {args.pse:g}, JND {args.jnd:g}, λ {args.lapse:g} | {runs} | "
          f"{share(sum(covers(f[1], args.pse) for f in found))} | "
          f"{share(sum(covers(f[3], args.jnd) for f in found))} | "
          f"{statistics.median(pses):+.2f} | {100 * statistics.median(jnds):+.1f}% |")


if __name__ == "__main__":
    main()
