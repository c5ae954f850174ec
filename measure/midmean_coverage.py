"""How often an estimate's 95% interval (the percentile bootstrap of the midmean log2 error,
`stats.midmean`) covers a known observer's true midmean, without the HTTP path: the
loopback observer's own answer function (`estimate_answer`: bias, Gaussian SD, lapse,
rounded to whole numbers, within 0 to 100) answers every trial of a paradigm's design
(its first condition's levels and trials per level, each level moved by `--offsets` to
see what whole-number truths do), `--runs` times per observer, and the truth is its exact
answer distribution summed (`paradigm_recovery.estimate_truth`). Each observer and offset
draws its own answers and resamples.

    uv run python measure/midmean_coverage.py --paradigm graphical --runs 2000
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from visioneval.core.registry import definition
from visioneval.loopback.observer import Curve, estimate_answer
from visioneval.stats.midmean import log2_error, midmean_draws, percentile_interval

sys.path.insert(0, str(Path(__file__).parent))
from paradigm_recovery import estimate_truth  # noqa: E402

OBSERVERS = "0:2:0.02,0:2.5:0.02,0:3:0.02,0:3.5:0.02,0:4.5:0.02,2:15:0.02"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paradigm", required=True)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--observers", default=OBSERVERS, help="BIAS:SD:LAPSE, comma-separated")
    parser.add_argument("--offsets", default="0,0.4", help="added to every level")
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paradigm = definition(args.paradigm).benchmark_class().paradigm  # type: ignore[attr-defined]
    first = paradigm.conditions()[0]
    curves = [Curve(*(float(v) for v in part.split(":")))
              for part in args.observers.split(",")]
    print(f"{paradigm.title}: {len(first.levels)} levels x {first.trials} trials, "
          f"{args.runs} runs a row, {args.resamples} resamples")
    print("| levels moved by | bias | SD | lapse | truth | 95% interval covers |")
    print("|---|---|---|---|---|---|")
    for offset in (float(o) for o in args.offsets.split(",")):
        levels = [level + offset for level in first.levels]
        for k, curve in enumerate(curves):
            truth = estimate_truth(curve, levels, 0, 100, "integrate", 0)
            covered = 0
            for run in range(args.runs):
                rng = random.Random(f"{offset}/{k}/{run}")
                errors = [log2_error(estimate_answer(level, curve, 0, 100, rng), level)
                          for level in levels for _ in range(first.trials)]
                found = percentile_interval(midmean_draws(errors, args.resamples,
                                                          (run, k, 11)))
                covered += found is not None and found[0] <= truth <= found[1]
            share = covered / args.runs
            error = math.sqrt(share * (1 - share) / args.runs)
            print(f"| {offset:g} | {curve.alpha:g} | {curve.beta:g} | {curve.lapse:g} | "
                  f"{truth:.4f} | {100 * share:.1f} ± {100 * error:.1f}% |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
