"""Bootstrap standard errors and 95% intervals for metrics built from per-sample sums.

Every headline metric here is a function of column sums over samples (exact match: the sum
of 0/1; macro F1: per-class TP, FP and FN summed, then F1 per class and the mean). So each
sample is kept as one short row of numbers (`Outcomes`, a few bytes a sample, never the
record), and a resample is a vector of per-sample counts: its sums are one matrix product,
1000 resamples in chunks. The rows are put in the order of their sample-id digests first,
so the intervals do not depend on the journal's order (a merged run's metrics.json equals
the whole run's) and a fixed seed makes them reproducible.

Samples that share an image are not independent (SalBench asks Detection, Referring and
Visual Referring about the same scenes; IllusionBench asks the shape and the scene of one
image). A row may carry a cluster key (the image); a clustered resample then draws whole
clusters with replacement, in the order of their key digests, and a metric is computed over
every row of the drawn clusters (Davison & Hinkley 1997, section 3.8; Field & Welsh 2007).
When every cluster holds one row, the clustered path is the plain one, number for number.

With few clusters the percentile interval of a share covers too little (91% at 20 images,
93% at 50: measure/few_clusters.py, docs/intervals.md). A share (a column's mean: exact
match, recall, accuracy) over clusters therefore gets the cluster bootstrap-t: the same
resamples, each studentized by its own cluster-robust (CR1) standard error, and the
interval read from the quantiles of those t ratios (Davison & Hinkley 1997, sections 3.8 and
5.2; CR1: Cameron & Miller 2015, J. Human Resources 50:317-372). A figure that is not a
share (macro F1, a mean of per-task accuracies) keeps the percentile interval.
"""

# Imports inside functions: numpy and scipy load on first use: `visioneval --help` loads this
# module.

from __future__ import annotations

import functools
import hashlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # numpy loads when intervals are computed, not when the CLI starts
    import numpy as np

SEED = 20261122
RESAMPLES = 1000
CHUNK = 50  # resamples per matrix product: 50 x n counts at a time
CHUNK_CELLS = 250_000  # ... fewer past 5,000 samples: a chunk's arrays stay ~2 MB each


def _chunk(n: int) -> int:
    """Resamples per matrix product for n rows (or clusters): CHUNK, fewer when the
    per-chunk arrays (resamples x n) would grow with a large run."""
    return max(1, min(CHUNK, CHUNK_CELLS // max(n, 1)))
LEVEL = 0.95
HOLDS_FROM = 20
"""The fewest clusters from which a clustered share's bootstrap-t interval covered 94-96% at
every tested count (measure/few_clusters.py: intra-image correlation 0.5, unequal images,
true share 0.7; docs/intervals.md "With few images"). Below it an interval carries a note."""


def few_clusters_note(count: int, by: str, holds_from: int = HOLDS_FROM,
                      what: str = "the interval") -> str | None:
    """"only 12 images: the interval's 95% is measured from 20 on" below `holds_from`
    clusters; None from it on."""
    if count >= holds_from:
        return None
    return f"only {count} {by}{'s' if count != 1 else ''}: {what}'s 95% is measured from " \
        f"{holds_from} on"


def _digest(key: str) -> bytes:
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Clusters:
    """Which rows resample together: `index[i]` is row i's cluster (its rank among the
    sorted key digests); `by` says what a cluster is ("image")."""

    by: str
    index: np.ndarray
    count: int

    @property
    def singletons(self) -> bool:
        """Every cluster holds one row: the plain bootstrap applies."""
        return self.count == len(self.index)


class Outcomes:
    """Per-sample rows of `width` numbers, keyed by sample id, stored flat; with a cluster
    key per row (the image it asks about) when the samples are not independent."""

    __slots__ = ("width", "_digests", "_values", "_clusters")

    def __init__(self, width: int):
        self.width = width
        self._digests = bytearray()
        self._values = array("d")
        self._clusters = bytearray()  # 16-byte key digests, one per row (the row's own id's
        # digest when no key was given)

    def __len__(self) -> int:
        return len(self._digests) // 16

    def add(self, sample_id: str, values: Sequence[float], cluster: str | None = None) -> None:
        digest = _digest(sample_id)
        self._digests += digest
        self._values.extend(values)
        self._clusters += digest if cluster is None else _digest(cluster)

    def extend(self, other: Outcomes) -> None:
        """Append another's rows (same width), keeping their ids and clusters."""
        if other.width != self.width:
            raise ValueError(f"rows of width {other.width} cannot join rows of width "
                             f"{self.width}")
        self._digests += other._digests
        self._values.extend(other._values)
        self._clusters += other._clusters

    def only(self, digests: np.ndarray) -> Outcomes:
        """A copy holding the rows whose id digest is among `digests` (16-byte ids)."""
        import numpy as np

        mine, values = self.sorted()
        keep = np.isin(mine, digests)
        out = Outcomes(self.width)
        out._digests = bytearray(mine[keep].tobytes())
        out._values = array("d", values[keep].ravel().tobytes())
        out._clusters = bytearray(self._sorted_clusters()[keep].tobytes())
        return out

    def clusters(self, by: str = "image") -> Clusters:
        """Each row's cluster, rows in the order of `matrix`, clusters in the order of their
        key digests (so a merged run's clusters are the whole run's)."""
        import numpy as np

        keys, index = np.unique(self._sorted_clusters(), return_inverse=True)
        return Clusters(by, index.ravel().astype(np.intp), len(keys))

    def _sorted_clusters(self) -> np.ndarray:
        import numpy as np

        digests = np.frombuffer(bytes(self._digests), dtype="S16")
        order = np.argsort(digests, kind="stable")
        return np.frombuffer(bytes(self._clusters), dtype="S16")[order]

    def digests(self) -> np.ndarray:
        return self.sorted()[0]

    def matrix(self) -> np.ndarray:
        """The rows (n x width) in the order of their id digests."""
        return self.sorted()[1]

    def sorted(self) -> tuple[np.ndarray, np.ndarray]:
        """(id digests, rows), both in the order of the digests: two runs' rows line up
        sample by sample when their digests are equal."""
        import numpy as np

        n = len(self)
        values = np.frombuffer(self._values, dtype=np.float64).reshape(n, self.width)
        digests = np.frombuffer(bytes(self._digests), dtype="S16")
        order = np.argsort(digests, kind="stable")
        return digests[order], values[order]


Statistic: TypeAlias = "Callable[[np.ndarray, int], np.ndarray]"
"""(column sums, one row per resample; n) -> the metrics, one row per resample."""


@functools.cache
def blas_libraries() -> Any:
    """numpy's BLAS libraries, found once per process (finding them costs ~3 ms; limiting
    them then costs ~0.01 ms; a run finds them while it waits for answers, `report.early`)."""
    import numpy  # noqa: F401  (its BLAS is what the resamples' products use)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """The resamples' matrix products on one BLAS thread. They are small (50 resamples x n
    samples at a time): OpenBLAS's threads waiting on each other made an interval 25-80 ms
    on two cores where one thread takes 6 ms, and far longer on a busy machine. One thread
    also sums in one order on every machine, so an interval's last digit does not depend on
    the number of cores (docs/decisions.md)."""
    with blas_libraries().limit(limits=1, user_api="blas"):
        yield


def replicates(rows: np.ndarray, statistic: Statistic, resamples: int = RESAMPLES,
               seed: int = SEED, clusters: Clusters | None = None) -> np.ndarray:
    """The statistic on `resamples` bootstrap resamples of the rows (resamples x k); with
    `clusters` (more rows than clusters), of the clusters."""
    with _one_blas_thread():
        return _replicates(rows, statistic, resamples, seed, clusters)


def _replicates(rows: np.ndarray, statistic: Statistic, resamples: int, seed: int,
                clusters: Clusters | None) -> np.ndarray:
    import numpy as np

    if clusters is not None and not clusters.singletons:
        return _cluster_replicates(rows, statistic, resamples, seed, clusters)
    n = len(rows)
    rng = np.random.default_rng(seed)
    out = []
    chunk = _chunk(n)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(size, n))
        counts = np.stack([np.bincount(p, minlength=n) for p in picks]).astype(np.float64)
        out.append(statistic(counts @ rows, n))
    return np.concatenate(out)


def _cluster_draws(clusters: Clusters, rows: int, resamples: int, seed: int
                   ) -> Iterator[np.ndarray]:
    """Each resample's draws of every cluster (resamples x clusters), chunk by chunk: the
    percentile and the studentized intervals read the same resamples."""
    import numpy as np

    k = clusters.count
    rng = np.random.default_rng(seed)
    step = _chunk(rows)  # the drawn counts are per row
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        picks = rng.integers(0, k, size=(size, k))
        yield np.stack([np.bincount(p, minlength=k) for p in picks])


def _cluster_replicates(rows: np.ndarray, statistic: Statistic, resamples: int, seed: int,
                        clusters: Clusters) -> np.ndarray:
    """Whole clusters drawn with replacement: a drawn cluster adds all its rows, so a
    resample's row count varies; the statistic is called once per distinct count."""
    import numpy as np

    out = []
    for drawn in _cluster_draws(clusters, len(rows), resamples, seed):
        counts = drawn[:, clusters.index].astype(np.float64)  # per row: its cluster's draws
        sums = counts @ rows
        sizes = counts.sum(axis=1).astype(np.int64)
        chunk: np.ndarray | None = None
        for n in np.unique(sizes):
            mask = sizes == n
            found = statistic(sums[mask], int(n))
            if chunk is None:
                chunk = np.empty((len(drawn), *found.shape[1:]), dtype=found.dtype)
            chunk[mask] = found
        assert chunk is not None
        out.append(chunk)
    return np.concatenate(out)


@dataclass(frozen=True)
class ClusterT:
    """The cluster bootstrap-t of column means: the means, their CR1 standard errors, and
    each resample's means and t ratios (mean* - mean) / se*."""

    estimate: np.ndarray
    se: np.ndarray
    means: np.ndarray
    ratios: np.ndarray

    def bounds(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The 95% percentile-t interval per column (columns x 2), within [low, high] (a
        mean lies within its values' range)."""
        import numpy as np

        tail = (1 - LEVEL) / 2
        q = np.quantile(self.ratios, [tail, 1 - tail], axis=0, method="inverted_cdf")
        with np.errstate(invalid="ignore"):
            found = np.stack([self.estimate - q[1] * self.se, self.estimate - q[0] * self.se],
                             axis=1)
        found[self.se == 0] = self.estimate[self.se == 0, None]  # no spread: the estimate
        return np.clip(found, low[:, None], high[:, None])


def cr1_variance(totals: np.ndarray, sizes: np.ndarray, drawn: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(means, CR1 variances) of the column means over clusters with per-cluster column
    `totals` (clusters x columns) and row counts `sizes`: G / (G - 1) * sum_g (T_g - n_g m)^2
    / N^2. With `drawn` (resamples x clusters), per resample, each cluster counted as often
    as it was drawn."""
    import numpy as np

    g = len(sizes)
    weights = np.ones((1, g)) if drawn is None else drawn.astype(np.float64)
    n = weights @ sizes
    means = (weights @ totals) / n[:, None]
    variance = np.empty_like(means)
    for j in range(totals.shape[1]):
        residual = totals[None, :, j] - means[:, j, None] * sizes[None, :]
        variance[:, j] = (weights * residual * residual).sum(axis=1)
    variance *= g / (g - 1) / (n * n)[:, None]
    return means, variance


def t_ratio(difference: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """difference / sqrt(variance); where the variance is 0, +-inf by the difference's sign
    (0 when it is 0 too)."""
    import numpy as np

    se = np.sqrt(np.clip(variance, 0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = difference / se
        infinite = np.where(difference != 0, np.sign(difference) * np.inf, 0.0)
    return np.where(se > 0, ratio, infinite)


def cluster_t(rows: np.ndarray, columns: Sequence[int], clusters: Clusters,
              resamples: int = RESAMPLES, seed: int = SEED) -> ClusterT:
    """The cluster bootstrap-t of the means of `columns` of the rows: the resamples
    `replicates` draws, each studentized by its own CR1 error."""
    with _one_blas_thread():
        return _cluster_t(rows, columns, clusters, resamples, seed)


def _cluster_t(rows: np.ndarray, columns: Sequence[int], clusters: Clusters, resamples: int,
               seed: int) -> ClusterT:
    import numpy as np

    k = clusters.count
    sizes = np.bincount(clusters.index, minlength=k).astype(np.float64)
    totals = np.stack([np.bincount(clusters.index, weights=rows[:, j], minlength=k)
                       for j in columns], axis=1)
    estimate, variance = cr1_variance(totals, sizes)
    means, ratios = [], []
    for drawn in _cluster_draws(clusters, len(rows), resamples, seed):
        found, spread = cr1_variance(totals, sizes, drawn)
        means.append(found)
        ratios.append(t_ratio(found - estimate, spread))
    return ClusterT(estimate[0], np.sqrt(variance[0]), np.concatenate(means),
                    np.concatenate(ratios))


def summaries(rows: np.ndarray, statistic: Statistic, names: Sequence[str],
              clusters: Clusters | None = None,
              shares: Sequence[int | None] | None = None) -> dict[str, dict[str, Any]]:
    """{name: {"se": ..., "ci95": [low, high]}} per metric the statistic returns, or
    {name: {"unavailable": reason}} when fewer than 2 samples (or clusters). With
    `clusters`, a cluster bootstrap, and each result says so ("clusters": what a cluster
    is, "n_clusters": how many, "method"). `shares`: per metric, the row column it is the
    mean of (None: not a mean); `mean_statistic`'s metrics are every column's. Over clusters
    of more than one row a share's interval is the cluster bootstrap-t, any other metric's
    the percentile interval."""
    if len(rows) < 2:
        why = f"{len(rows)} scored sample{'s' if len(rows) != 1 else ''}: no interval"
        return {name: {"unavailable": why} for name in names}
    if clusters is not None and clusters.count < 2:
        why = f"{clusters.count} {clusters.by}: no clustered interval"
        return {name: {"unavailable": why} for name in names}
    import numpy as np

    if shares is None:
        shares = list(range(len(names))) if statistic is mean_statistic else []
    grouped = clusters if clusters is not None and not clusters.singletons else None
    columns = [(i, c) for i, c in enumerate(shares) if c is not None]
    found = None if grouped is None or not columns else \
        cluster_t(rows, [c for _, c in columns], grouped)
    if found is not None and statistic is mean_statistic:
        values = found.means  # the same resamples' means: no second pass over the rows
    else:
        values = replicates(rows, statistic, clusters=clusters)
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(values, [tail, 100 - tail], axis=0)
    bounds = np.stack([low, high], axis=1)
    methods = ["percentile"] * len(names)
    if found is not None:
        picked = [c for _, c in columns]
        studentized = found.bounds(rows[:, picked].min(axis=0), rows[:, picked].max(axis=0))
        for j, (i, _) in enumerate(columns):
            bounds[i] = studentized[j]
            methods[i] = "bootstrap-t"
    se = values.std(axis=0, ddof=1)
    out = {}
    for i, name in enumerate(names):
        result: dict[str, Any] = {"se": float(se[i]), "ci95": [float(x) for x in bounds[i]]}
        if clusters is not None:
            result |= {"clusters": clusters.by, "n_clusters": clusters.count,
                       "method": methods[i]}
        out[name] = result
    return out


def attach(block: dict[str, Any], found: dict[str, dict[str, Any]]) -> None:
    """Write `k_se` and `k_ci95` (or `k_ci95_unavailable`) beside each metric `k` present;
    for a cluster bootstrap also `k_ci95_clusters` (what a cluster is) and
    `k_ci95_n_clusters`."""
    for name, result in found.items():
        if name not in block:
            continue
        if "unavailable" in result:
            block[f"{name}_ci95_unavailable"] = result["unavailable"]
        else:
            block[f"{name}_se"] = result["se"]
            block[f"{name}_ci95"] = result["ci95"]
            if "clusters" in result:
                block[f"{name}_ci95_clusters"] = result["clusters"]
                block[f"{name}_ci95_n_clusters"] = result["n_clusters"]


def mean_statistic(sums: np.ndarray, n: int) -> np.ndarray:
    """Each column's mean: exact match, recall, accuracy."""
    return sums / n
