"""How often visioneval's 95% bootstrap intervals cover the true accuracy when several
questions ask about one image and answers are correlated within it.

Each simulated run has IMAGES images and QUESTIONS questions per image. An image's chance
of a right answer is drawn from Beta(a, b) with mean ACCURACY and intra-image correlation
rho (a = p (1 - rho) / rho, b = (1 - p) (1 - rho) / rho: the beta-binomial, whose answers
correlate exactly rho within an image); each question is then right with that chance. The
true accuracy is ACCURACY. Both intervals come from `stats.bootstrap.summaries` on the same
rows: the naive one treats every answer as its own sample, the clustered one draws images.

Run by hand (about a minute a correlation on two cores):
    uv run python measure/cluster_coverage.py [--runs 1000]
The table goes into docs/intervals.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from visioneval.stats.bootstrap import Outcomes, mean_statistic, summaries

IMAGES = 100
QUESTIONS = 4
ACCURACY = 0.7
CORRELATIONS = (0.0, 0.1, 0.3, 0.6)


def simulate(rng: np.random.Generator, rho: float) -> np.ndarray:
    """One run's answers (IMAGES x QUESTIONS, 1 = right)."""
    if rho == 0:
        chance = np.full(IMAGES, ACCURACY)
    else:
        scale = (1 - rho) / rho
        chance = rng.beta(ACCURACY * scale, (1 - ACCURACY) * scale, size=IMAGES)
    return (rng.random((IMAGES, QUESTIONS)) < chance[:, None]).astype(np.float64)


def intervals(answers: np.ndarray) -> tuple[list[float], list[float]]:
    """(naive, clustered) 95% intervals of the accuracy, as visioneval computes them."""
    kept = Outcomes(1)
    for image in range(IMAGES):
        for question in range(QUESTIONS):
            kept.add(f"{image}/{question}", (answers[image, question],), f"image-{image}")
    rows = kept.matrix()
    naive = summaries(rows, mean_statistic, ("accuracy",))["accuracy"]["ci95"]
    clustered = summaries(rows, mean_statistic, ("accuracy",), kept.clusters())
    return naive, clustered["accuracy"]["ci95"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    print(f"{IMAGES} images x {QUESTIONS} questions, true accuracy {ACCURACY}, "
          f"{args.runs} runs per row, 1000 bootstrap resamples per interval")
    print("| intra-image correlation | naive coverage | naive mean width | "
          "clustered coverage | clustered mean width |")
    print("|---|---|---|---|---|")
    for rho in CORRELATIONS:
        rng = np.random.default_rng([args.seed, int(rho * 1000)])
        covered = np.zeros(2)
        width = np.zeros(2)
        started = time.perf_counter()
        for _ in range(args.runs):
            for i, (low, high) in enumerate(intervals(simulate(rng, rho))):
                covered[i] += low <= ACCURACY <= high
                width[i] += high - low
        share, mean = covered / args.runs, width / args.runs
        print(f"| {rho:.1f} | {100 * share[0]:.1f}% | {100 * mean[0]:.1f} points | "
              f"{100 * share[1]:.1f}% | {100 * mean[1]:.1f} points |"
              f"  <!-- {time.perf_counter() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
