"""Bootstrap standard errors and 95% intervals for metrics built from per-sample sums.

Every headline metric here is a function of column sums over samples (exact match: the sum
of 0/1; macro F1: per-class TP, FP and FN summed, then F1 per class and the mean). So each
sample is kept as one short row of numbers (`Outcomes`, a few bytes a sample, never the
record), and a resample is a vector of per-sample counts: its sums are one matrix product,
1000 resamples in chunks. The rows are put in the order of their sample-id digests first,
so the intervals do not depend on the journal's order (a merged run's metrics.json equals
the whole run's) and a fixed seed makes them reproducible.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # numpy loads when intervals are computed, not when the CLI starts
    import numpy as np

SEED = 20261122
RESAMPLES = 1000
CHUNK = 50  # resamples per matrix product: 50 x n counts at a time
LEVEL = 0.95


class Outcomes:
    """Per-sample rows of `width` numbers, keyed by sample id, stored flat."""

    __slots__ = ("width", "_digests", "_values")

    def __init__(self, width: int):
        self.width = width
        self._digests = bytearray()
        self._values = array("d")

    def __len__(self) -> int:
        return len(self._digests) // 16

    def add(self, sample_id: str, values: Sequence[float]) -> None:
        self._digests += hashlib.blake2b(sample_id.encode(), digest_size=16).digest()
        self._values.extend(values)

    def only(self, digests: np.ndarray) -> Outcomes:
        """A copy holding the rows whose id digest is among `digests` (16-byte ids)."""
        import numpy as np

        mine, values = self.sorted()
        keep = np.isin(mine, digests)
        out = Outcomes(self.width)
        out._digests = bytearray(mine[keep].tobytes())
        out._values = array("d", values[keep].ravel().tobytes())
        return out

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


def replicates(rows: np.ndarray, statistic: Statistic, resamples: int = RESAMPLES,
               seed: int = SEED) -> np.ndarray:
    """The statistic on `resamples` bootstrap resamples of the rows (resamples x k)."""
    import numpy as np

    n = len(rows)
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        picks = rng.integers(0, n, size=(size, n))
        counts = np.stack([np.bincount(p, minlength=n) for p in picks]).astype(np.float64)
        out.append(statistic(counts @ rows, n))
    return np.concatenate(out)


def summaries(rows: np.ndarray, statistic: Statistic, names: Sequence[str]
              ) -> dict[str, dict[str, Any]]:
    """{name: {"se": ..., "ci95": [low, high]}} per metric the statistic returns, or
    {name: {"unavailable": reason}} when fewer than 2 samples."""
    if len(rows) < 2:
        why = f"{len(rows)} scored sample{'s' if len(rows) != 1 else ''}: no interval"
        return {name: {"unavailable": why} for name in names}
    import numpy as np

    values = replicates(rows, statistic)
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(values, [tail, 100 - tail], axis=0)
    se = values.std(axis=0, ddof=1)
    return {name: {"se": float(se[i]), "ci95": [float(low[i]), float(high[i])]}
            for i, name in enumerate(names)}


def attach(block: dict[str, Any], found: dict[str, dict[str, Any]]) -> None:
    """Write `k_se` and `k_ci95` (or `k_ci95_unavailable`) beside each metric `k` present."""
    for name, result in found.items():
        if name not in block:
            continue
        if "unavailable" in result:
            block[f"{name}_ci95_unavailable"] = result["unavailable"]
        else:
            block[f"{name}_se"] = result["se"]
            block[f"{name}_ci95"] = result["ci95"]


def mean_statistic(sums: np.ndarray, n: int) -> np.ndarray:
    """Each column's mean: exact match, recall, accuracy."""
    return sums / n
