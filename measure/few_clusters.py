"""How visioneval's clustered intervals and clustered paired test hold up with few images,
against its former methods and cluster-robust and wild-bootstrap alternatives, when answers
about one image are strongly correlated and images hold unequal numbers of questions.

Each simulated run has G images (clusters). An image's number of questions is geometric on
1, 2, ... with mean 4 (variance 12: many images with one question, a few with ten or more).
An image's chance of a right answer is drawn from Beta(a, b) with mean 0.7 and intra-image
correlation 0.5 (a = p (1 - rho) / rho, b = (1 - p) (1 - rho) / rho: the beta-binomial,
whose answers correlate exactly rho within an image); each question is then right with that
chance, independently of the image's size, so the pooled share right estimates 0.7.

Intervals of the share right (95%, each clipped to [0, 1] for its width):
- visioneval: `stats.bootstrap.summaries` with the images as clusters, the function the
  metrics call: the cluster bootstrap-t of 1000 whole-image resamples, each studentized by
  its own CR1 error.
- visioneval before: the same resamples' percentile interval (`summaries` told the share is
  not a mean, `shares=()`), what the metrics called before.
- CR1 + t(G-1): the cluster-robust (sandwich) variance of a mean with the small-sample factor
  G / (G - 1) (Cameron and Miller 2015, "A practitioner's guide to cluster-robust
  inference", J. Human Resources 50:317-372, section VI), t with G - 1 degrees of freedom.
- CR2 + t(G-1): Bell and McCaffrey's (2002) bias-reduced variance; for a mean it divides
  each image's squared residual by 1 - n_g / N.
- wild bootstrap-t: the wild cluster bootstrap (Cameron, Gelbach and Miller 2008, REStat
  90:414-427) with Webb's six-point weights (Webb 2023, Canadian J. Economics 56:1219-1263),
  residuals of the fitted mean multiplied per image, studentized by the CR1 error.
- cluster bootstrap-t: whole images drawn with replacement, each resample studentized by
  its own CR1 error (Davison and Hinkley 1997, section 3.8 with 5.2's studentized interval).

Paired tests (type-I error at 0.05 under no difference): two runs over the same images,
each run with its own image chances (both Beta with mean 0.7, correlation 0.5, drawn
independently), so the per-question differences correlate 0.5 within an image as well.
- visioneval: `stats.paired.wild_cluster_test`, the function compare calls: the wild cluster
  bootstrap-t with no difference imposed, Webb weights, 999 seeded resamples.
- visioneval before: Obuchowski's (1998) clustered McNemar, what compare called before (its
  variance is CR1's, referred to chi-square(1)); kept here to compare.
- CR1 + t(G-1) and CR2 + t(G-1) on the per-question differences.
- wild bootstrap-t: the null imposed (Webb weights on each image's summed difference).

Run by hand (2000 runs a cell: about five minutes on two cores):
    uv run python measure/few_clusters.py --runs 2000 [--clusters 10 20 30 50 200]
The tables go into docs/intervals.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, chi2
from scipy.stats import t as student_t

from visioneval.stats.bootstrap import Clusters, mean_statistic, summaries
from visioneval.stats.paired import wild_cluster_test

ACCURACY = 0.7
CORRELATION = 0.5
MEAN_SIZE = 4
CLUSTER_COUNTS = (10, 20, 30, 50, 200)
LEVEL = 0.95
ALPHA = 0.05
RESAMPLES = 999
BAND = (0.94, 0.96)  # coverage a method should hold
ERROR_BAND = (0.04, 0.06)  # type-I error a test should hold
WEBB = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])

Interval = tuple[float, float]


@dataclass(frozen=True)
class Run:
    """One simulated run: each answer's image (`index`, 0..G-1) and whether it was right."""

    index: np.ndarray
    right: np.ndarray
    count: int

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.index, minlength=self.count).astype(np.float64)

    def sums(self, values: np.ndarray | None = None) -> np.ndarray:
        """Per image: the sum of `values` (default: the right answers)."""
        chosen = self.right if values is None else values
        return np.bincount(self.index, weights=chosen, minlength=self.count)


def image_sizes(rng: np.random.Generator, count: int) -> np.ndarray:
    """Questions per image: geometric on 1, 2, ... with mean MEAN_SIZE."""
    return rng.geometric(1 / MEAN_SIZE, size=count)


def image_chances(rng: np.random.Generator, count: int) -> np.ndarray:
    """Each image's chance of a right answer: beta with mean ACCURACY, correlation rho."""
    scale = (1 - CORRELATION) / CORRELATION
    return rng.beta(ACCURACY * scale, (1 - ACCURACY) * scale, size=count)


def simulate_run(rng: np.random.Generator, count: int) -> Run:
    index = np.repeat(np.arange(count), image_sizes(rng, count))
    right = (rng.random(len(index)) < image_chances(rng, count)[index]).astype(np.float64)
    return Run(index, right, count)


def simulate_pair(rng: np.random.Generator, count: int) -> tuple[Run, Run]:
    """Two runs over the same questions with equal true accuracy, each with its own image
    chances: no difference, but differences correlated within an image."""
    index = np.repeat(np.arange(count), image_sizes(rng, count))
    first = rng.random(len(index)) < image_chances(rng, count)[index]
    second = rng.random(len(index)) < image_chances(rng, count)[index]
    return (Run(index, first.astype(np.float64), count),
            Run(index, second.astype(np.float64), count))


def cr_variance(sums: np.ndarray, sizes: np.ndarray, kind: str) -> float:
    """The cluster-robust variance of the pooled mean sum(sums) / sum(sizes): CR1 (factor
    G / (G - 1)) or CR2 (each image's squared residual over 1 - n_g / N)."""
    total = float(sizes.sum())
    residual = sums - sizes * (sums.sum() / total)
    if kind == "CR1":
        g = len(sums)
        return g / (g - 1) * float((residual ** 2).sum()) / total ** 2
    if kind == "CR2":
        return float((residual ** 2 / (1 - sizes / total)).sum()) / total ** 2
    raise ValueError(f"unknown variance {kind!r}")


def visioneval_interval(run: Run, former: bool = False) -> Interval:
    """visioneval's clustered interval of the share right, as the metrics get it (`former`:
    the percentile interval of the same resamples, as they got it before)."""
    clusters = Clusters("image", run.index.astype(np.intp), run.count)
    found = summaries(run.right[:, None], mean_statistic, ("accuracy",), clusters,
                      shares=() if former else None)
    low, high = found["accuracy"]["ci95"]
    return float(low), float(high)


def cr_interval(run: Run, kind: str) -> Interval:
    """Estimate +- t(G-1) x the cluster-robust standard error."""
    sums, sizes = run.sums(), run.sizes
    estimate = float(sums.sum() / sizes.sum())
    half = student_t.ppf(0.5 + LEVEL / 2, run.count - 1) * np.sqrt(cr_variance(sums, sizes,
                                                                              kind))
    return estimate - half, estimate + half


def _studentized_bounds(estimate: float, se: float, t_values: np.ndarray) -> Interval:
    """The bootstrap-t interval: estimate - q(1 - a/2) se, estimate - q(a/2) se."""
    if se == 0:
        return estimate, estimate
    tail = (1 - LEVEL) / 2
    low_q, high_q = np.quantile(t_values, [tail, 1 - tail], method="inverted_cdf")
    return float(estimate - high_q * se), float(estimate - low_q * se)


def _t_ratio(numerator: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """numerator / sqrt(variance), with a zero variance giving +-inf (or 0 over 0)."""
    se = np.sqrt(np.clip(variance, 0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = numerator / se
        infinite = np.where(numerator != 0, np.sign(numerator) * np.inf, 0.0)
    return np.where(se > 0, ratio, infinite)


def wild_interval(run: Run, rng: np.random.Generator, resamples: int = RESAMPLES) -> Interval:
    """Wild cluster bootstrap-t with Webb weights: y*_g = n_g p + w_g e_g per image."""
    sums, sizes = run.sums(), run.sizes
    total, g = float(sizes.sum()), run.count
    estimate = float(sums.sum() / total)
    residual = sums - sizes * estimate
    weights = rng.choice(WEBB, size=(resamples, g))
    shift = (weights * residual).sum(axis=1) / total  # p* - p
    starred = weights * residual - shift[:, None] * sizes  # residuals of the resample
    variance = g / (g - 1) * (starred ** 2).sum(axis=1) / total ** 2
    se = float(np.sqrt(cr_variance(sums, sizes, "CR1")))
    return _studentized_bounds(estimate, se, _t_ratio(shift, variance))


def cluster_t_interval(run: Run, rng: np.random.Generator,
                       resamples: int = RESAMPLES) -> Interval:
    """Cluster (pairs) bootstrap-t: images drawn with replacement, each resample studentized
    by its own CR1 error."""
    sums, sizes = run.sums(), run.sizes
    g = run.count
    estimate = float(sums.sum() / sizes.sum())
    drawn = rng.multinomial(g, np.full(g, 1 / g), size=resamples).astype(np.float64)
    total = drawn @ sizes
    starred = (drawn @ sums) / total
    squares = (drawn @ sums ** 2 - 2 * starred * (drawn @ (sums * sizes))
               + starred ** 2 * (drawn @ sizes ** 2))
    variance = g / (g - 1) * squares / total ** 2
    se = float(np.sqrt(cr_variance(sums, sizes, "CR1")))
    return _studentized_bounds(estimate, se, _t_ratio(starred - estimate, variance))


def interval_methods(rng: np.random.Generator,
                     resamples: int = RESAMPLES) -> dict[str, Callable[[Run], Interval]]:
    """Every interval compared, by the name its table row carries."""
    return {
        "visioneval cluster bootstrap-t": visioneval_interval,
        "visioneval before: percentile": lambda run: visioneval_interval(run, former=True),
        "CR1 + t(G-1)": lambda run: cr_interval(run, "CR1"),
        "CR2 + t(G-1)": lambda run: cr_interval(run, "CR2"),
        "wild cluster bootstrap-t (Webb)": lambda run: wild_interval(run, rng, resamples),
        "cluster bootstrap-t": lambda run: cluster_t_interval(run, rng, resamples),
    }


def visioneval_p(first: Run, second: Run) -> float:
    """visioneval's clustered paired test's p-value (stats.paired), on the same answers."""
    clusters = Clusters("image", first.index.astype(np.intp), first.count)
    found = wild_cluster_test(first.right, second.right, clusters, "accuracy")
    assert found.p_value is not None
    return found.p_value


def obuchowski_p(first: Run, second: Run) -> float:
    """Obuchowski's (1998) clustered McNemar, visioneval's test before: with X_g, Y_g the
    right answers of each run in image g, var(p) = G / (G - 1) / N^2 sum_g (X_g - n_g p)^2,
    the covariance likewise, (p_b - p_a)^2 / (var_a + var_b - 2 cov) against chi-square(1)."""
    sizes, x, y = first.sizes, first.sums(), second.sums()
    total, g = float(sizes.sum()), first.count
    da, db = x - sizes * (x.sum() / total), y - sizes * (y.sum() / total)
    variance = g / (g - 1) / total ** 2 * float(((db - da) ** 2).sum())
    difference = (y.sum() - x.sum()) / total
    if variance <= 0:  # every image shifted alike: a sign test over images, as it did
        up, down = int((y - x > 0).sum()), int((y - x < 0).sum())
        return float(binomtest(min(up, down), up + down, 0.5).pvalue) if up + down else 1.0
    return float(chi2.sf(difference ** 2 / variance, 1))


def cr_paired_p(first: Run, second: Run, kind: str) -> float:
    """Two-sided t(G-1) test of the mean per-question difference, cluster-robust error."""
    sums, sizes = second.sums() - first.sums(), first.sizes
    mean = float(sums.sum() / sizes.sum())
    variance = cr_variance(sums, sizes, kind)
    if variance <= 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * student_t.sf(abs(mean) / np.sqrt(variance), first.count - 1))


def wild_paired_p(first: Run, second: Run, rng: np.random.Generator,
                  resamples: int = RESAMPLES) -> float:
    """Wild cluster bootstrap-t test, no difference imposed: each image's summed difference
    times a Webb weight; the share of |t*| at least |t|."""
    sums, sizes = second.sums() - first.sums(), first.sizes
    total, g = float(sizes.sum()), first.count
    observed = _t_ratio(np.array([sums.sum() / total]),
                        np.array([cr_variance(sums, sizes, "CR1")]))[0]
    if observed == 0:
        return 1.0
    weights = rng.choice(WEBB, size=(resamples, g))
    starred = weights * sums
    mean = starred.sum(axis=1) / total
    residual = starred - mean[:, None] * sizes
    variance = g / (g - 1) * (residual ** 2).sum(axis=1) / total ** 2
    return float(np.mean(np.abs(_t_ratio(mean, variance)) >= abs(observed)))


def paired_tests(rng: np.random.Generator,
                 resamples: int = RESAMPLES) -> dict[str, Callable[[Run, Run], float]]:
    """Every paired test compared, by the name its table row carries."""
    return {
        "visioneval wild cluster bootstrap-t": visioneval_p,
        "visioneval before: clustered McNemar (Obuchowski)": obuchowski_p,
        "CR1 + t(G-1)": lambda a, b: cr_paired_p(a, b, "CR1"),
        "CR2 + t(G-1)": lambda a, b: cr_paired_p(a, b, "CR2"),
        "wild cluster bootstrap-t (Webb)": lambda a, b: wild_paired_p(a, b, rng, resamples),
    }


@dataclass(frozen=True)
class Share:
    """A Monte Carlo share (coverage or rejections) and its standard error."""

    value: float
    se: float

    @classmethod
    def of(cls, hits: np.ndarray) -> Share:
        share = float(hits.mean())
        return cls(share, float(np.sqrt(share * (1 - share) / len(hits))))

    def within(self, band: tuple[float, float]) -> bool:
        return band[0] <= self.value <= band[1]


@dataclass(frozen=True)
class Coverage:
    share: Share
    width: float
    width_se: float


def coverage_cell(count: int, runs: int, seed: int,
                  resamples: int = RESAMPLES) -> dict[str, Coverage]:
    """Each interval's coverage of ACCURACY and mean width over `runs` runs of `count`
    images; every method sees the same runs."""
    rng = np.random.default_rng([seed, count, 1])
    methods = interval_methods(np.random.default_rng([seed, count, 2]), resamples)
    found = {name: np.empty((runs, 2)) for name in methods}
    for i in range(runs):
        run = simulate_run(rng, count)
        for name, method in methods.items():
            found[name][i] = np.clip(method(run), 0, 1)
    out = {}
    for name, bounds in found.items():
        width = bounds[:, 1] - bounds[:, 0]
        hits = (bounds[:, 0] <= ACCURACY) & (bounds[:, 1] >= ACCURACY)
        out[name] = Coverage(Share.of(hits), float(width.mean()),
                             float(width.std(ddof=1) / np.sqrt(runs)) if runs > 1 else 0.0)
    return out


def rejection_cell(count: int, runs: int, seed: int,
                   resamples: int = RESAMPLES) -> dict[str, Share]:
    """Each paired test's share of p < ALPHA over `runs` null pairs of `count` images."""
    rng = np.random.default_rng([seed, count, 3])
    methods = paired_tests(np.random.default_rng([seed, count, 4]), resamples)
    rejected = {name: np.empty(runs, dtype=bool) for name in methods}
    for i in range(runs):
        first, second = simulate_pair(rng, count)
        for name, method in methods.items():
            rejected[name][i] = method(first, second) < ALPHA
    return {name: Share.of(hits) for name, hits in rejected.items()}


def smallest_holding(shares: dict[int, Share], band: tuple[float, float]) -> str:
    """The fewest images from which on every tested count stays inside the band."""
    counts = sorted(shares)
    for i, count in enumerate(counts):
        if all(shares[c].within(band) for c in counts[i:]):
            return str(count)
    return f"over {counts[-1]}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=RESAMPLES,
                        help="resamples of the candidate bootstraps (visioneval's: 1000)")
    parser.add_argument("--clusters", type=int, nargs="+", default=list(CLUSTER_COUNTS))
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args(argv)
    counts = sorted(args.clusters)
    print(f"accuracy {ACCURACY}, intra-image correlation {CORRELATION}, questions per image "
          f"geometric with mean {MEAN_SIZE}; {args.runs} runs a cell")
    coverage: dict[str, dict[int, Coverage]] = {}
    for count in counts:
        started = time.perf_counter()
        for name, found in coverage_cell(count, args.runs, args.seed, args.resamples).items():
            coverage.setdefault(name, {})[count] = found
        print(f"  intervals, {count} images: {time.perf_counter() - started:.0f} s", flush=True)
    rejection: dict[str, dict[int, Share]] = {}
    for count in counts:
        started = time.perf_counter()
        for name, share in rejection_cell(count, args.runs, args.seed, args.resamples).items():
            rejection.setdefault(name, {})[count] = share
        print(f"  paired tests, {count} images: {time.perf_counter() - started:.0f} s",
              flush=True)
    print("\nCoverage of the 95% interval and its mean width, in points "
          "(+- one Monte Carlo standard error)")
    print("| interval | images | coverage | mean width |")
    print("|---|---|---|---|")
    for name, cells in coverage.items():
        for count, found in cells.items():
            print(f"| {name} | {count} | {100 * found.share.value:.1f} ± "
                  f"{100 * found.share.se:.1f}% | {100 * found.width:.1f} ± "
                  f"{100 * found.width_se:.1f} |")
    print("\nType-I error at 0.05 with no difference (+- one Monte Carlo standard error)")
    print("| paired test | images | rejections |")
    print("|---|---|---|")
    for name, shares in rejection.items():
        for count, share in shares.items():
            print(f"| {name} | {count} | {100 * share.value:.1f} ± {100 * share.se:.1f}% |")
    print("\nFewest images from which on each method holds its band at every tested count")
    print("| method | coverage 94-96% | type-I error 4-6% |")
    print("|---|---|---|")
    for name in dict.fromkeys([*coverage, *rejection]):
        held = smallest_holding({c: f.share for c, f in coverage[name].items()}, BAND) \
            if name in coverage else "-"
        rejects = smallest_holding(rejection[name], ERROR_BAND) if name in rejection else "-"
        print(f"| {name} | {held} | {rejects} |")

if __name__ == "__main__":
    main()
