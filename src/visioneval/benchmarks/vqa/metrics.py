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
from visioneval.core.records import Record
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.exactsum import ExactSum
from visioneval.metrics.labelsets import ClassScores, ParserTally
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries


class BlockTally:
    """One block's running counts (a group, or the whole run), fed record by record: memory
    grows with the labels, not the samples."""

    def __init__(self, scorer: str):
        self.scorer = scorer
        self.n = self.n_errors = self.n_unparsed = self.n_ambiguous = 0
        self.correct = ExactSum()  # order-free: a merged run's sums equal a whole run's
        self.outcomes = Outcomes(1)  # per-sample accuracy, for the bootstrap interval
        self.labels = ParserTally()  # the set scorer's SalBench metrics
        self.classes: set[str] = set()

    def add(self, record: Record) -> None:
        if not record.ok:
            self.n_errors += 1
            return
        score = record.scores.get(self.scorer, {})
        self.n += 1
        self.n_unparsed += int(score.get("unparsed", 0))
        self.n_ambiguous += int(score.get("ambiguous", 0))
        self.correct += score.get("correct", 0.0)
        self.outcomes.add(record.id, (float(score.get("correct", 0.0)),))
        if self.scorer == "set":
            gold = labels(record.target)
            self.classes |= gold
            self.labels.add(set(record.parsed.get(self.scorer) or []), gold, score)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "n_errors": self.n_errors,
                               "n_unparsed": self.n_unparsed,
                               "n_ambiguous": self.n_ambiguous}
        if not self.n:
            out["unavailable"] = f"no scored samples ({self.n_errors} failed requests)"
            return out
        out["accuracy"] = self.correct.value / self.n
        attach(out, summaries(self.outcomes.matrix(), mean_statistic, ("accuracy",)))
        if self.scorer == "set":
            found = self.labels.result(sorted(self.classes), self.n_errors)
            out |= {k: found[k] for k in ("exact_match", "macro_f1", "sample_f1", "per_class")}
        return out


def summarize(records: Iterable[Record], scorer: str) -> dict[str, Any]:
    """metrics.json in one pass: the whole run and each group."""
    overall, groups = BlockTally(scorer), {}
    for record in records:
        overall.add(record)
        if record.group not in groups:
            groups[record.group] = BlockTally(scorer)
        groups[record.group].add(record)
    return {"scorer": scorer, "overall": overall.result(),
            "groups": {g: tally.result() for g, tally in sorted(groups.items())}}


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
