"""Recovering a known point of subjective equality: simulated observers with a known PSE,
σ and lapse rate answer "is the comparison bigger than the standard?" at a method-of-
constant-stimuli design of at most 150 trials, and `fit_pse` fits each run with its 1000
parametric-bootstrap refits.

Observers (standard 100): an 8% illusion (PSE 108, σ 6, λ 0.02) and no illusion (PSE 100,
σ 10, λ 0.02). Designs: 9 levels x 16 trials and 7 levels x 20, spread evenly over the
standard ± 2.5σ (as an experimenter centres the comparisons on the standard, not on the
PSE she does not know yet); and, for the illusion, levels 80 to 110, so that the PSE lies
2 from the highest tested level and a refit's PSE often beyond it (the open ends).

Per design: the share of runs reached; the coverage of the true PSE and of the true JND
(0.674σ) by the 95% intervals (an open end counts as infinite; a run not reached covers
nothing) with its binomial error, and the same among the reached runs only; the shares of
runs with an open PSE end; the median error and median absolute error of the PSE (in the
level's units) and of the JND (relative) over the reached runs, ± a bootstrap error over
runs.

    uv run python measure/pse_recovery.py --runs 1000
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from visioneval.stats.pse_fit import JND_Z, fit_pse

STANDARD = 100.0


@dataclass(frozen=True)
class Design:
    """An observer (PSE, σ, λ) and the levels it is tested at."""

    name: str
    pse: float
    sigma: float
    lapse: float
    lowest: float
    highest: float
    levels: int
    trials: int

    def grid(self) -> np.ndarray:
        return np.linspace(self.lowest, self.highest, self.levels)

    def probabilities(self) -> np.ndarray:
        p = norm.cdf((self.grid() - self.pse) / self.sigma)
        return self.lapse + (1 - 2 * self.lapse) * p


DESIGNS = (
    Design("8% illusion, 9 x 16", 108.0, 6.0, 0.02, 85.0, 115.0, 9, 16),
    Design("8% illusion, 7 x 20", 108.0, 6.0, 0.02, 85.0, 115.0, 7, 20),
    Design("no illusion, 9 x 16", 100.0, 10.0, 0.02, 75.0, 125.0, 9, 16),
    Design("no illusion, 7 x 20", 100.0, 10.0, 0.02, 75.0, 125.0, 7, 20),
    Design("8% illusion, levels 80-110, 9 x 16", 108.0, 6.0, 0.02, 80.0, 110.0, 9, 16),
)


@dataclass(frozen=True)
class Outcome:
    reached: bool
    outside: str | None
    pse: float
    jnd: float
    pse_ci: tuple[float, float]
    jnd_ci: tuple[float, float]


def _ends(interval: tuple[float | None, float | None] | None) -> tuple[float, float]:
    """An open end as infinite; no interval covers nothing."""
    if interval is None:
        return (math.nan, math.nan)
    low, high = interval
    return (-math.inf if low is None else low, math.inf if high is None else high)


def one_run(args: tuple[Design, int, int]) -> Outcome:
    design, seed, resamples = args
    n = np.full(design.levels, design.trials)
    k = np.random.default_rng([seed, design.levels, int(design.lowest)]).binomial(
        n, design.probabilities())
    found = fit_pse(design.grid(), k, n, resamples=resamples, seed=seed)
    return Outcome(found.status == "reached", found.outside,
                   math.nan if found.pse is None else found.pse,
                   math.nan if found.jnd is None else found.jnd,
                   _ends(found.pse_ci), _ends(found.jnd_ci))


def _median_se(values: np.ndarray, rng: np.random.Generator) -> float:
    """A bootstrap standard error of the median over runs."""
    return float(np.std([np.median(rng.choice(values, len(values))) for _ in range(200)]))


def row(design: Design, outcomes: list[Outcome]) -> str:
    runs = len(outcomes)
    true_jnd = JND_Z * design.sigma
    rng = np.random.default_rng(0)
    done = [o for o in outcomes if o.reached]
    cover_pse = np.mean([o.pse_ci[0] <= design.pse <= o.pse_ci[1] for o in outcomes])
    cover_jnd = np.mean([o.jnd_ci[0] <= true_jnd <= o.jnd_ci[1] for o in outcomes])
    held = [o.pse_ci[0] <= design.pse <= o.pse_ci[1] for o in done]
    held_jnd = [o.jnd_ci[0] <= true_jnd <= o.jnd_ci[1] for o in done]
    open_low = np.mean([o.reached and math.isinf(o.pse_ci[0]) for o in outcomes])
    open_high = np.mean([o.reached and math.isinf(o.pse_ci[1]) for o in outcomes])
    beyond = sum(o.outside == "above" for o in outcomes)
    below = sum(o.outside == "below" for o in outcomes)
    pse_error = np.asarray([o.pse - design.pse for o in done])
    jnd_error = np.asarray([o.jnd / true_jnd - 1 for o in done])

    def coverage(c: float) -> str:
        return f"{100 * c:.1f} ± {100 * math.sqrt(c * (1 - c) / runs):.1f}%"

    def median(e: np.ndarray, scale: float, unit: str, sign: str) -> str:
        return f"{scale * np.median(e):{sign}.2f} ± {scale * _median_se(e, rng):.2f}{unit}"

    return (f"| {design.name} | {len(done)}/{runs} ({below} below, {beyond} beyond) | "
            f"{coverage(float(cover_pse))} | {coverage(float(cover_jnd))} | "
            f"{100 * np.mean(held):.1f}% / {100 * np.mean(held_jnd):.1f}% | "
            f"{100 * open_low:.1f}% / {100 * open_high:.1f}% | "
            f"{median(pse_error, 1, '', '+')} | {median(np.abs(pse_error), 1, '', '')} | "
            f"{median(jnd_error, 100, '%', '+')} | {median(np.abs(jnd_error), 100, '%', '')} |")


HEADER = ("| design | reached (PSE outside) | PSE coverage | JND coverage | of reached runs: "
          "PSE / JND | PSE end open low / high | median PSE error | median abs PSE error | "
          "median JND error | median abs JND error |\n" + "|---" * 10 + "|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"standard {STANDARD:g}; {args.runs} runs a design, {args.resamples} refits a run")
    print(HEADER)
    with ProcessPoolExecutor(args.workers) as pool:
        for design in DESIGNS:
            jobs = [(design, seed, args.resamples) for seed in range(args.runs)]
            print(row(design, list(pool.map(one_run, jobs, chunksize=16))), flush=True)


if __name__ == "__main__":
    main()
