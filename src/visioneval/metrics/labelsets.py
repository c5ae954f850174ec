"""Scores of answers that are sets of labels, as lmms-eval's SalBench utils.py aggregates them
(the formulas are in `benchmarks/salbench/metrics.py`'s docstring): per-sample exact match
and set F1, per-class precision/recall/F1 from pooled counts with the reference's 1e-8
guards, and their macro mean. SalBench and VQA's multi-label questions share them."""

# Imports inside functions: numpy and scipy load on first use: `visioneval --help` loads this
# module.

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.stats.bootstrap import Outcomes, attach, summaries
from visioneval.stats.exactsum import ExactSum

if TYPE_CHECKING:
    import numpy as np

EPS = 1e-8


def sample_scores(pred: set[str], gold: set[str]) -> dict[str, float]:
    """Per-sample scores with the reference's guards (a prediction is never an empty set)."""
    matches = len(pred & gold)
    precision = matches / (len(pred) + EPS)
    recall = matches / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall + EPS)
    return {"exact_match": float(pred == gold), "sample_f1": f1}


@dataclass
class ParserTally:
    """One parser's running counts over one config's scored samples: everything the
    metrics need, in memory that grows with the classes, not the samples. Sums are exact
    (`ExactSum`), so the figures do not depend on the order of the samples: a merged run's
    equal the same run's done in one piece."""

    n: int = 0
    n_unparsed: int = 0
    exact_match: ExactSum = field(default_factory=ExactSum)
    sample_f1: ExactSum = field(default_factory=ExactSum)
    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    # Per-sample rows for the bootstrap (`stats.bootstrap`), kept when samples come with ids.
    outcomes: Outcomes | None = None

    def add(self, pred: set[str], gold: set[str], scores: dict[str, float] | None,
            classes: Sequence[str] = (), sample_id: str | None = None) -> None:
        """One scored sample; `scores` as computed when it was parsed (None: from the sets);
        an answer naming none of `classes` counts as unparsed. With `sample_id`, the
        sample's outcome is kept for the intervals."""
        scores = scores or sample_scores(pred, gold)
        self.n += 1
        self.n_unparsed += not pred.intersection(classes)
        self.exact_match += scores["exact_match"]
        self.sample_f1 += scores["sample_f1"]
        self.count_classes(pred, gold)
        if sample_id is not None and classes:
            if self.outcomes is None:
                self.outcomes = Outcomes(2 + 3 * len(classes))
            self.outcomes.add(sample_id, [
                scores["exact_match"], scores["sample_f1"],
                *[float(c in pred and c in gold) for c in classes],
                *[float(c in pred and c not in gold) for c in classes],
                *[float(c in gold and c not in pred) for c in classes]])

    def count_classes(self, pred: set[str], gold: set[str]) -> None:
        for label in pred:
            (self.tp if label in gold else self.fp)[label] += 1
        for label in gold - pred:
            self.fn[label] += 1

    def per_class(self, classes: Sequence[str]) -> dict[str, dict[str, float]]:
        out = {}
        for label in classes:
            tp, fp, fn = self.tp[label], self.fp[label], self.fn[label]
            precision = tp / (tp + fp + EPS)
            recall = tp / (tp + fn + EPS)
            out[label] = {
                "precision": precision,
                "recall": recall,
                "f1": 2 * precision * recall / (precision + recall + EPS),
                "support": tp + fn,
                "predicted": tp + fp,
            }
        return out

    def result(self, classes: Sequence[str], n_errors: int) -> dict[str, Any]:
        """Metrics for the samples added (see the module's docstring)."""
        n = self.n
        base: dict[str, Any] = {"n": n, "n_errors": n_errors, "n_unparsed": self.n_unparsed}
        if n == 0:
            base["unavailable"] = f"no scored samples ({n_errors} failed requests)"
            return base
        per_class = self.per_class(classes)
        out = base | {
            "exact_match": self.exact_match.value / n,
            "macro_f1": sum(c["f1"] for c in per_class.values()) / len(classes),
            "sample_f1": self.sample_f1.value / n,
            "per_class": per_class,
        }
        if self.outcomes is not None and self.outcomes.width == 2 + 3 * len(classes):
            attach(out, summaries(self.outcomes.matrix(), _statistic(len(classes)),
                                  ("exact_match", "macro_f1", "sample_f1")))
        return out


def _statistic(n_classes: int):
    """Exact match, macro F1 (pooled per-class F1, then the mean over the classes, with the
    reference's 1e-8 guards) and sample F1 from a resample's column sums."""
    import numpy as np

    c = n_classes

    def statistic(sums: np.ndarray, n: int) -> np.ndarray:
        tp, fp, fn = sums[:, 2:2 + c], sums[:, 2 + c:2 + 2 * c], sums[:, 2 + 2 * c:2 + 3 * c]
        precision = tp / (tp + fp + EPS)
        recall = tp / (tp + fn + EPS)
        f1 = 2 * precision * recall / (precision + recall + EPS)
        return np.column_stack([sums[:, 0] / n, f1.mean(axis=1), sums[:, 1] / n])

    return statistic


def summarize_parser(pairs: Sequence[tuple[set[str], set[str]]], classes: Sequence[str],
                     n_errors: int, per_sample: Sequence[dict[str, float]] | None = None
                     ) -> dict[str, Any]:
    """Metrics for one parser over one config's scored samples. `per_sample`: the scores
    computed when each answer was parsed (a record keeps class labels exactly but may elide
    other pieces, so set sizes are taken from there); computed from `pairs` when None."""
    tally = ParserTally()
    for i, (pred, gold) in enumerate(pairs):
        tally.add(pred, gold, per_sample[i] if per_sample is not None else None, classes)
    return tally.result(classes, n_errors)


class ClassScores(MetricsBlock):
    """One class's precision, recall and F1 (pooled counts, the reference's 1e-8 guards)."""

    precision: float
    recall: float
    f1: float
    support: int
    predicted: int


class ParserMetrics(MetricsBlock):
    """One parser's figures over one config (`ParserTally.result`), with each figure's
    standard error and 95% interval where the samples had ids."""

    n: int
    n_errors: int
    n_unparsed: int
    unavailable: str | None = None
    exact_match: float | None = None
    macro_f1: float | None = None
    sample_f1: float | None = None
    per_class: dict[str, ClassScores] | None = None
    exact_match_se: float | None = None
    exact_match_ci95: Interval | None = None
    exact_match_ci95_unavailable: str | None = None
    macro_f1_se: float | None = None
    macro_f1_ci95: Interval | None = None
    macro_f1_ci95_unavailable: str | None = None
    sample_f1_se: float | None = None
    sample_f1_ci95: Interval | None = None
    sample_f1_ci95_unavailable: str | None = None
