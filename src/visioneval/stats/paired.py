"""Paired tests between two runs over the same samples: McNemar's exact test for a 0/1
outcome (exact match, recall) and a paired bootstrap interval for a macro-F1 difference.

A benchmark says what to pair (`BenchmarkDefinition.paired_rows`: per record, named rows of
either kind); this module only lines the rows up by sample id and tests them.

When a metric's rows share images (a row's `cluster`, e.g. SalBench's three tasks on one
scene), the pairs are not independent and McNemar's exact test is too eager: a 0/1 outcome
then gets the wild cluster bootstrap-t with no difference imposed and Webb's six-point
weights (Cameron, Gelbach & Miller 2008, REStat 90:414-427; Webb 2023, Canadian J. Economics
56:1219-1263), which held its 5% from 10 images on where Obuchowski's (1998) clustered
McNemar rejected 9% at 20 (measure/few_clusters.py); any other outcome gets a paired
bootstrap that draws whole clusters. The result's `test` names which.
"""

# Imports inside functions: numpy and scipy load on first use: `visioneval --help` loads this
# module.

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from visioneval.stats.bootstrap import (
    SEED,
    Clusters,
    Outcomes,
    cr1_variance,
    few_clusters_note,
    replicates,
    summaries,
    t_ratio,
)

if TYPE_CHECKING:
    import numpy as np

Kind = Literal["correct", "macro_f1"]
ALPHA = 0.05


@dataclass(frozen=True)
class PairedRow:
    """One sample's outcome for a paired test: `correct` is (0 or 1,); `macro_f1` is the
    sample's TP, FP and FN per class, (tp..., fp..., fn...). `cluster`: what the sample
    shares with others (its image), when a metric pools samples of one image. `pooled`: the
    metric exists to pool several samples of an image (SalBench's tasks of one scene), so a
    run in which no image has two of them leaves it out: it would repeat a per-task row."""

    kind: Kind
    values: tuple[float, ...]
    cluster: str | None = None
    pooled: bool = False


@dataclass(frozen=True)
class PairedResult:
    key: str
    test: str
    a: float
    b: float
    difference: float  # b - a
    detail: str  # discordant counts, or the interval of the difference
    p_value: float | None
    significant: bool
    interval: tuple[float, float] | None = None  # the paired bootstrap's, of the difference
    note: str | None = None  # too few images for the test's measured error rate


RUNS = ("in the first run", "in this run")


def mcnemar(a: np.ndarray, b: np.ndarray, key: str,
            names: tuple[str, str] = RUNS) -> PairedResult:
    """McNemar's exact test: the discordant pairs are Binomial(n, 1/2) under no difference.
    `names` say where a sample was right only (the detail line)."""
    from scipy.stats import binomtest

    only_a = int(((a == 1) & (b == 0)).sum())
    only_b = int(((a == 0) & (b == 1)).sum())
    n = only_a + only_b
    p = float(binomtest(min(only_a, only_b), n, 0.5).pvalue) if n else 1.0
    return PairedResult(key, "McNemar exact", float(a.mean()), float(b.mean()),
                        float(b.mean() - a.mean()),
                        f"right only {names[0]} {only_a}, only {names[1]} {only_b}",
                        p, p < ALPHA)


WILD_CLUSTER = "wild cluster bootstrap-t (Webb weights)"
WILD_RESAMPLES = 999  # p in steps of 1/1000, from 0.001 (Davidson & MacKinnon 2000: alpha
# (B + 1) a whole number)
WILD_HOLDS_FROM = 10
"""The fewest images from which the wild cluster bootstrap-t rejected 4-6% at 0.05 with no
difference, at every tested count (measure/few_clusters.py: 10, 20, 50 and 200 images,
intra-image correlation 0.5, unequal images; docs/intervals.md "With few images")."""
WEBB_WEIGHTS = (-1.5 ** 0.5, -1.0, -0.5 ** 0.5, 0.5 ** 0.5, 1.0, 1.5 ** 0.5)
"""Webb's (2023) six points, each with probability 1/6: mean 0, variance 1, and 6^G
distinct draws where Rademacher's two points give only 2^G with few clusters."""


def wild_cluster_test(a: np.ndarray, b: np.ndarray, clusters: Clusters, key: str,
                      names: tuple[str, str] = RUNS, resamples: int = WILD_RESAMPLES,
                      seed: int = SEED) -> PairedResult:
    """The wild cluster bootstrap-t of the mean difference b - a with no difference imposed:
    with d_g the summed difference of cluster g (n_g pairs, G clusters, N pairs), t is the
    mean difference over its CR1 error; each resample multiplies every d_g by a Webb weight
    and studentizes its own mean by its own CR1 error; p is the share of |t*| at least |t|,
    the observed t counted among them (Davison & Hinkley 1997, eq. 4.11: never 0).
    The clusters come in the order of their key digests and the weights from a fixed seed,
    so p is reproducible and does not depend on the journals' order."""
    import numpy as np
    from scipy.stats import binomtest

    k = clusters.count
    p_a, p_b = float(a.mean()), float(b.mean())
    difference = p_b - p_a
    only_a = int(((a == 1) & (b == 0)).sum())
    only_b = int(((a == 0) & (b == 1)).sum())
    detail = f"right only {names[0]} {only_a}, only {names[1]} {only_b}; {k} {clusters.by}s"
    note = few_clusters_note(k, clusters.by, WILD_HOLDS_FROM, "the test")
    if k < 2:  # the CR1 variance has G - 1 in its denominator: one cluster tests nothing
        return PairedResult(key, WILD_CLUSTER, p_a, p_b, difference,
                            f"{detail}: one {clusters.by}, no test", None, False)
    sizes = np.bincount(clusters.index, minlength=k).astype(np.float64)
    shift = np.bincount(clusters.index, weights=b - a, minlength=k)
    _, variance = cr1_variance(shift[:, None], sizes)
    if variance[0, 0] > 0:
        observed = abs(difference) / float(np.sqrt(variance[0, 0]))
        rng = np.random.default_rng(seed)
        weights = np.array(WEBB_WEIGHTS)
        step = max(1, 250_000 // k)  # resamples x clusters stays ~2 MB
        beyond = 0
        for start in range(0, resamples, step):
            drawn = weights[rng.integers(0, 6, size=(min(step, resamples - start), k))]
            starred = drawn * shift  # each cluster's difference under no difference
            means = starred.sum(axis=1) / sizes.sum()
            residual = starred - means[:, None] * sizes
            spread = k / (k - 1) * (residual * residual).sum(axis=1) / sizes.sum() ** 2
            # a draw equal to t up to rounding (all weights +-1 redraw the data) counts
            beyond += int((np.abs(t_ratio(means, spread)) >= observed * (1 - 1e-12)).sum())
        p = (1 + beyond) / (1 + resamples)  # the observed t counts as one of its draws
    else:
        # Every cluster shifted alike (or none did): t is undefined. A sign test over the
        # clusters that changed is the cautious answer (one pair each).
        up, down = int((shift > 0).sum()), int((shift < 0).sum())
        p = float(binomtest(min(up, down), up + down, 0.5).pvalue) if up + down else 1.0
        detail += f" (every {clusters.by} alike: a sign test over {clusters.by}s)"
    return PairedResult(key, WILD_CLUSTER, p_a, p_b, difference, detail, p, p < ALPHA,
                        note=note)


def paired_test(kind: Kind, a: np.ndarray, b: np.ndarray, key: str,
                names: tuple[str, str] = RUNS, clusters: Clusters | None = None,
                binary: bool | None = None) -> PairedResult:
    """The paired test that fits: McNemar's exact test for 0/1 outcomes (`binary`; None:
    when every value is 0 or 1) and a paired bootstrap otherwise; with clusters of more
    than one pair, the wild cluster bootstrap-t and a paired bootstrap over clusters."""
    import numpy as np

    if binary is None:
        binary = kind == "correct" and bool(np.isin(a[:, 0], (0.0, 1.0)).all()
                                            and np.isin(b[:, 0], (0.0, 1.0)).all())
    clustered = clusters is not None and not clusters.singletons
    if binary:
        return wild_cluster_test(a[:, 0], b[:, 0], clusters, key, names) \
            if clustered and clusters is not None else mcnemar(a[:, 0], b[:, 0], key, names)
    return bootstrap_difference(kind, a, b, key, clusters if clustered else None)


def macro_f1(sums: np.ndarray) -> np.ndarray:
    """Macro F1 of each row of summed (tp..., fp..., fn...): SalBench's formula (lmms-eval),
    F1 per class with 1e-8 in every denominator, then the plain mean over classes."""
    classes = sums.shape[1] // 3
    tp, fp, fn = sums[:, :classes], sums[:, classes:2 * classes], sums[:, 2 * classes:]
    precision = tp / (tp + fp + 1e-8)
    recall = tp / (tp + fn + 1e-8)
    return (2 * precision * recall / (precision + recall + 1e-8)).mean(axis=1)


def value_of(kind: Kind, rows: np.ndarray) -> float:
    """The metric of a set of rows: the mean of a 0/1 outcome, or macro F1 of the summed
    counts."""
    if kind == "correct":
        return float(rows[:, 0].mean())
    return float(macro_f1(rows.sum(axis=0, keepdims=True))[0])


def interval_of(kind: Kind, rows: np.ndarray, clusters: Clusters | None = None
                ) -> tuple[float, float] | None:
    """The metric's 95% bootstrap interval (None with fewer than 2 rows); over clusters
    when given: a share's by the cluster bootstrap-t, as `stats.bootstrap.summaries`."""
    if len(rows) < 2 or (clusters is not None and clusters.count < 2):
        return None

    def statistic(sums: np.ndarray, n: int) -> np.ndarray:
        return (sums[:, :1] / n) if kind == "correct" else macro_f1(sums)[:, None]

    found = summaries(rows, statistic, ("metric",), clusters,
                      shares=(0,) if kind == "correct" else ())
    low, high = found["metric"]["ci95"]
    return float(low), float(high)


def bootstrap_difference(kind: Kind, a: np.ndarray, b: np.ndarray, key: str,
                         clusters: Clusters | None = None) -> PairedResult:
    """A paired bootstrap (the same resampled samples for both) of the metric's difference
    b - a: significant when its 95% interval leaves out 0. For a mean outcome whose values
    are not all 0 or 1 (chance, partial credit), where McNemar does not apply. With
    clusters of more than one pair, whole clusters are drawn."""
    import numpy as np

    width = a.shape[1]

    def metric(sums: np.ndarray, n: int) -> np.ndarray:
        return sums[:, 0] / n if kind == "correct" else macro_f1(sums)

    def statistic(sums: np.ndarray, n: int) -> np.ndarray:
        return (metric(sums[:, width:], n) - metric(sums[:, :width], n))[:, None]

    first, second = value_of(kind, a), value_of(kind, b)
    clustered = clusters is not None and not clusters.singletons
    if clusters is not None and clustered and clusters.count < 2:
        return PairedResult(key, f"paired bootstrap over {clusters.by}s", first, second,
                            second - first, f"one {clusters.by}: no interval", None, False)
    values = replicates(np.hstack([a, b]), statistic,
                        clusters=clusters if clustered else None)[:, 0]
    low, high = (float(x) for x in np.percentile(values, [2.5, 97.5]))
    name = f"paired bootstrap over {clusters.by}s" if clustered and clusters is not None \
        else "paired bootstrap"
    return PairedResult(key, name, first, second, second - first,
                        f"95% interval of the difference {100 * low:+.1f} to "
                        f"{100 * high:+.1f} points", None,
                        not low <= 0.0 <= high, (low, high))


class PairedCollector:
    """Rows per metric for one run, kept by sample id (a few bytes a sample)."""

    def __init__(self) -> None:
        self.kinds: dict[str, Kind] = {}
        self.rows: dict[str, Outcomes] = {}
        self.pooled: set[str] = set()

    def add(self, sample_id: str, rows: dict[str, PairedRow]) -> None:
        for key, row in rows.items():
            if key not in self.rows:
                self.kinds[key] = row.kind
                self.rows[key] = Outcomes(len(row.values))
                if row.pooled:
                    self.pooled.add(key)
            if self.rows[key].width == len(row.values):
                self.rows[key].add(sample_id, row.values, row.cluster)

    def metrics(self) -> list[tuple[str, Kind]]:
        """The metrics to test, in the order first seen: a pooled metric only where it
        pools (some image has two or more of its rows)."""
        return [(key, kind) for key, kind in self.kinds.items()
                if key not in self.pooled or _pools(self.rows[key].clusters())]

    def common(self, other: PairedCollector) -> tuple[PairedCollector, int]:
        """A copy narrowed to the samples `other` has too, per metric; and how many of this
        collector's samples were left out (counted on its first metric)."""
        out, dropped = PairedCollector(), 0
        for i, (key, rows) in enumerate(self.rows.items()):
            if key not in other.rows:
                continue
            out.kinds[key] = self.kinds[key]
            out.rows[key] = rows.only(other.rows[key].digests())
            if key in self.pooled:
                out.pooled.add(key)
            if i == 0:
                dropped = len(rows) - len(out.rows[key])
        return out, dropped


def _pools(clusters: Clusters) -> bool:
    """Some cluster holds two rows or more, and there are two clusters to compare."""
    return not clusters.singletons and clusters.count >= 2


def paired(first: PairedCollector, other: PairedCollector, names: tuple[str, str] = RUNS
           ) -> tuple[list[PairedResult], list[str]]:
    """The tests on every metric both runs have over the same samples; the metrics whose
    samples differ are named (compared without pairing)."""
    import numpy as np

    results, unpaired = [], []
    for key, kind in first.metrics():
        if key not in other.rows:
            continue
        ids_a, a = first.rows[key].sorted()
        ids_b, b = other.rows[key].sorted()
        if len(ids_a) != len(ids_b) or not np.array_equal(ids_a, ids_b):
            unpaired.append(key)
            continue
        if len(ids_a) < 2:
            unpaired.append(key)
            continue
        results.append(paired_test(kind, a, b, key, names, first.rows[key].clusters(),
                                   binary=None))  # item means (--epochs) are fractions
    return results, unpaired
