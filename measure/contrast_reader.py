"""The contrast reader's own thresholds: how faint a Gabor patch the builtin pixel reader
still finds, below the default design's lowest level (the reader is right at every level
of `visioneval data synth-contrast`, so a run with it reaches no threshold).

The stimuli are drawn as synth draws them (`ContrastDetection.draw`, dithered in linear
light), at contrasts from 0.025% to 0.4% in steps of 2, at every frequency; each level's
proportion correct is fitted as a run fits it (a Weibull with γ = 0.5, the threshold at
75% correct, 1000 parametric-bootstrap refits).

    uv run python measure/contrast_reader.py --trials 60
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from visioneval.benchmarks.contrast.paradigm import ContrastDetection
from visioneval.benchmarks.contrast.reader import read
from visioneval.paradigms.fits import Cell, Tally, fit_curves
from visioneval.paradigms.trial import stimulus_seed

LEVELS = (0.025, 0.05, 0.1, 0.2, 0.4)  # % Michelson


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=60, help="trials per level")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paradigm = ContrastDetection()
    tallies = {}
    for c, condition in enumerate(paradigm.conditions()):
        tally = Tally()
        for li, level in enumerate(LEVELS):
            right = 0
            for t in range(args.trials):
                made = paradigm.draw(condition, level, t, stimulus_seed(1, c, li, t))
                right += read(made.question, made.png) == made.trial.answer
            tally.cells[level] = Cell(n=args.trials, k=right)
        tallies[condition.name] = tally
    print(f"The contrast reader, {args.trials} trials a level at {LEVELS} %")
    print("| frequency | proportion correct per level | threshold | 95% interval |")
    print("|---|---|---|---|")
    for fitted in fit_curves(paradigm, tallies, 1000, 0):
        c = fitted.curve
        shares = ", ".join(f"{p.k / p.n:.2f}" for p in c.points)
        band = c.threshold_ci95 or (None, None)
        span = " to ".join("open" if v is None else f"{v:.3g}%" for v in band)
        value = "-" if c.threshold is None else f"{c.threshold:.3g}%"
        print(f"| {c.condition} | {shares} | {value} | {span} |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
