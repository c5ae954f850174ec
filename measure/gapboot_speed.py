"""How long `visioneval explain` takes to draw one step's paired interval at full size: a
UnitTable (harness.gapboot) of N units in N/2 clusters over 14 strata (BLINK's shape),
two readings per unit, 1,000 paired resamples.

    uv run python measure/gapboot_speed.py --units 130000
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from visioneval.core.gap import GapShare, GapUnit
from visioneval.harness.gapboot import UnitTable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=130_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    units = [GapUnit(f"c{i // 2}", {
        ("paper", "original"): GapShare(f"t{i % 14}", float(rng.random() < 0.7), 1.0),
        ("lmms-eval", "original"): GapShare(f"t{i % 14}", float(rng.random() < 0.6), 1.0)})
        for i in range(args.units)]
    started = time.perf_counter()
    table = UnitTable()
    table.add("", units)
    added = time.perf_counter() - started
    started = time.perf_counter()
    interval = table.difference(("", ("paper", "original")), ("", ("lmms-eval", "original")))
    drawn = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.units} units, {args.units // 2} clusters, 14 strata: added in {added:.2f} s, "
          f"one paired interval {interval} in {drawn:.2f} s; peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
