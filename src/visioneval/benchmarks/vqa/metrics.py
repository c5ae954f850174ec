"""metrics.json of the generic image-question benchmark, recomputed from records alone:
`{"scorer", "overall": {...}, "groups": {"<group>": {...}}}`, each block with n (scored
samples), n_errors (failed requests, left out of every score), n_unparsed (answers nothing
could be read from: wrong for accuracy, counted here), n_ambiguous (of those, answers
naming two options) and accuracy; the set scorer adds SalBench's exact match, macro F1 and
sample F1 (`metrics.labelsets.summarize_parser`, over the labels of the block's targets)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from visioneval.benchmarks.vqa.scorers import labels
from visioneval.core.accuracy import Tally, by_group
from visioneval.core.records import Record
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.metrics.labelsets import ClassScores, ParserTally


class BlockTally(Tally):
    """One block's running counts (a group, or the whole run), fed record by record: memory
    grows with the labels, not the samples. Accuracy as the default tally counts it, read
    from the scorer's own block, plus what the scorers report."""

    def __init__(self, scorer: str):
        super().__init__("correct")
        self.scorer = scorer
        self.n_unparsed = self.n_ambiguous = 0
        self.labels = ParserTally()  # the set scorer's SalBench metrics
        self.classes: set[str] = set()

    def score(self, record: Record) -> float:
        return float(record.scores.get(self.scorer, {}).get("correct", 0.0))

    def add(self, record: Record) -> None:
        super().add(record)
        if not record.ok:
            return
        score = record.scores.get(self.scorer, {})
        self.n_unparsed += int(score.get("unparsed", 0))
        self.n_ambiguous += int(score.get("ambiguous", 0))
        if self.scorer == "set":
            gold = labels(record.target)
            self.classes |= gold
            self.labels.add(set(record.parsed.get(self.scorer) or []), gold, score)

    def counts(self) -> dict[str, Any]:
        return super().counts() | {"n_unparsed": self.n_unparsed,
                                   "n_ambiguous": self.n_ambiguous}

    def result(self) -> dict[str, Any]:
        out = super().result()
        if self.n and self.scorer == "set":
            found = self.labels.result(sorted(self.classes), self.n_errors)
            out |= {k: found[k] for k in ("exact_match", "macro_f1", "sample_f1", "per_class")}
        return out


def summarize(records: Iterable[Record], scorer: str) -> dict[str, Any]:
    """metrics.json in one pass: the whole run and each group."""
    overall, groups = by_group(records, lambda: BlockTally(scorer))
    return {"scorer": scorer, "overall": overall.result(),
            "groups": {g: tally.result() for g, tally in groups.items()}}


# -- metrics.json's shape -------------------------------------------------------------------


class VqaBlock(MetricsBlock):
    """The whole run's or one group's figures (`BlockTally.result`); the set scorer adds
    SalBench's exact match, macro F1, sample F1 and per-label scores."""

    n: int
    n_errors: int
    n_unparsed: int
    n_ambiguous: int
    unavailable: str | None = None
    accuracy: float | None = None
    accuracy_se: float | None = None
    accuracy_ci95: Interval | None = None
    accuracy_ci95_unavailable: str | None = None
    exact_match: float | None = None
    macro_f1: float | None = None
    sample_f1: float | None = None
    per_class: dict[str, ClassScores] | None = None


class VqaMetrics(MetricsBlock):
    """metrics.json of the image-question benchmark."""

    scorer: str
    overall: VqaBlock
    groups: dict[str, VqaBlock]
