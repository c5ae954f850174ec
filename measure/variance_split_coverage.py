"""How many items the variance split's intervals need: the coverage of the 95% intervals of
the between-item and within-item variances and of answer variation's share, by number of
items, for a model whose items' chances of a right answer are drawn from Beta(A, B) and
whose K answers per item are independent draws at that chance (the loopback's `varying`
model, simulated directly: `measure/epochs_recovery.py` checks the same through HTTP).

Run by hand (about five minutes on two cores):
    uv run python measure/variance_split_coverage.py --runs 1000
The table goes into docs/epochs.md; the smallest item count at which every interval holds
93-97% is `epochs.summary.SPLIT_HOLDS_FROM`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np

from visioneval.loopback.varying import between_within
from visioneval.stats.variance_split import split

SETTINGS = ((2.0, 1.0), (0.5, 0.5))
ITEMS = (20, 40, 60, 100, 200)


def coverage(a: float, b: float, items: int, epochs: int, runs: int, seed: int) -> list[float]:
    between, within = between_within(a, b)
    share = (within / epochs) / (between + within / epochs)
    rng = np.random.default_rng(seed)
    hits = np.zeros(3)
    for _ in range(runs):
        chances = rng.beta(a, b, items)
        answers = (rng.random((items, epochs)) < chances[:, None]).astype(float)
        found = split(answers.sum(1), answers.sum(1), np.full(items, epochs))
        assert found is not None
        for i, (part, truth) in enumerate(((found.between, between), (found.within, within),
                                           (found.within_share, share))):
            hits[i] += part.ci95 is not None and part.ci95[0] <= truth <= part.ci95[1]
    return list(hits / runs)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args(argv)
    error = 100 * math.sqrt(0.95 * 0.05 / args.runs)
    print(f"{args.runs} runs a cell, {args.epochs} answers per item; coverage of the 95% "
          f"intervals (± {error:.1f} points Monte Carlo error at 95%)")
    print("| Beta(A, B) | items | between | within | answer share |")
    print("|---|---|---|---|---|")
    for a, b in SETTINGS:
        for items in ITEMS:
            found = coverage(a, b, items, args.epochs, args.runs, seed=items)
            cells = " | ".join(f"{100 * c:.1f}%" for c in found)
            print(f"| ({a:g}, {b:g}) | {items} | {cells} |")


if __name__ == "__main__":
    main()
