"""The repeated answers beside the benchmark's tables (epochs.json): each item's mean over
its K answers, the score of those item means with its 95% interval (whole items drawn, or
whole images when items share one), the first answers' score with its own interval for
comparison, the score of each epoch, and the variance split into between items and within
items (`stats/variance_split.py`, Miller 2024 section 3).

An item's answer is scored by the benchmark's `headline_outcome` (1 right, 0 wrong, or a
fraction), read on the record as the first answer's: the outcome `--target-ci` watches. A
failed request is counted per epoch and leaves that answer out; an item keeps the answers it
has. Memory: three numbers per item, plus its image's key.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from visioneval.core.capabilities import PairsRecords
from visioneval.core.epoch_ids import EPOCH_OF, EXPECTED, WHY_NONE, as_first_answer, epoch_of
from visioneval.core.sidefiles import read_summary
from visioneval.core.variant_ids import family_of
from visioneval.stats.bootstrap import Outcomes, mean_statistic, summaries
from visioneval.stats.detection import Z95
from visioneval.stats.variance_split import TARGET_SHARE, split

if TYPE_CHECKING:
    from pathlib import Path

    from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
    from visioneval.core.records import Record
    from visioneval.stats.variance_split import Part, Split

SPLIT_HOLDS_FROM = 40
"""The fewest items with two answers or more from which the split's 95% intervals cover
93-97% of the time at every setting measured (`measure/variance_split_coverage.py`: Beta(2,
1) and Beta(0.5, 0.5) chances, 4 answers per item, 1000 runs a cell; at 20 items the
between-item interval covered 87%). Below it the summary says so."""
FILE = "epochs.json"
MAX_FILE_BYTES = 10_000_000  # a summary of a few dozen numbers per epoch


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Score(_Closed):
    """A score (a fraction) with its 95% interval; when whole images were drawn, what a
    cluster was and how many there were; or why there is no interval."""

    value: float
    n: int
    ci95: list[float] | None = None
    ci95_clusters: str | None = None
    ci95_n_clusters: int | None = None
    ci95_unavailable: str | None = None


class Component(_Closed):
    value: float
    ci95: list[float] | None = None


class VarianceSplit(_Closed):
    """Var(score) = (between + within / K) / n over the `items` items with two answers or
    more; `within_share`: the part of it that is answer variation."""

    items: int
    answers_per_item: float
    between: Component
    within: Component
    within_share: Component
    ci95_clusters: str | None = None
    ci95_n_clusters: int
    answers_for_tenth: int | None = None
    """The fewest answers per item that would leave answer variation under a tenth of the
    variance (None: the items do not differ, so no number of answers does)."""
    half_width_at_that: float | None = None
    """The 95% interval's half-width of the item-mean score with that many answers."""
    few_items: str | None = None
    """Below SPLIT_HOLDS_FROM items: that the intervals may be too short."""
    one_pass_sd: float
    """The standard deviation of one pass's score (one answer per item) from answer
    variation alone, sqrt(within / n): how much a rerun of the same model moves it."""


class EpochScore(_Closed):
    epoch: int
    value: float | None = None
    n: int
    errors: int


class EpochsSummary(_Closed):
    """epochs.json: a run whose every item was answered `epochs` times."""

    epochs: int
    outcome: str
    score: Literal["sampled", "expected"] = "sampled"
    """expected: the item means are of each answer's expected outcome from its first token's
    log-probabilities (`--score expected`); `first_answers` stays the sampled outcome."""
    expected_unavailable: dict[str, int] | None = None
    """With `--score expected`: answers that have no expected outcome, by reason."""
    items: int
    answers: int
    errors: int
    item_means: Score | None = None
    first_answers: Score | None = None
    per_epoch: list[EpochScore]
    epoch_sd: float | None = None
    split: VarianceSplit | None = None
    split_unavailable: str | None = None


class EpochCollector:
    """Fed every record of a run once (`add`); `result` is the summary."""

    def __init__(self, benchmark: Benchmark, definition: BenchmarkDefinition | None,
                 epochs: int, expected: bool = False):
        self.benchmark = benchmark
        self.expected = expected
        self.unavailable: Counter[str] = Counter()
        self.pairs = definition if isinstance(definition, PairsRecords) else None
        self.epochs = epochs
        self.items: dict[str, list[float]] = {}  # id -> [sum, sum of squares, count]
        self.firsts: dict[str, float] = {}
        self.clusters: dict[str, str] = {}
        self.epoch_sums = [0.0] * (epochs + 1)
        self.epoch_n = [0] * (epochs + 1)
        self.epoch_errors = [0] * (epochs + 1)

    def add(self, record: Record) -> None:
        """Take one record; a variant's records and epochs past K are not this summary's."""
        epoch = epoch_of(record)
        if family_of(record) is not None or epoch > self.epochs:
            return
        if not record.ok:
            self.epoch_errors[epoch] += 1
            return
        first = as_first_answer(record)
        sampled = self.benchmark.headline_outcome(first)
        item = str(record.metadata.get(EPOCH_OF, record.id)) if epoch > 1 else record.id
        if epoch == 1 and sampled is not None and math.isfinite(sampled):
            self.firsts[item] = sampled
        outcome = self._expected(record) if self.expected else sampled
        if outcome is None or not math.isfinite(outcome):
            return
        found = self.items.get(item)
        if found is None:
            self.items[item] = [outcome, outcome * outcome, 1.0]
            cluster = self._cluster(first)
            if cluster is not None:
                self.clusters[item] = cluster
        else:
            found[0] += outcome
            found[1] += outcome * outcome
            found[2] += 1
        self.epoch_sums[epoch] += outcome
        self.epoch_n[epoch] += 1

    def _expected(self, record: Record) -> float | None:
        """The answer's expected outcome (`--score expected`); None, counted by reason, when
        it has none."""
        found = record.parsed.get(EXPECTED)
        if isinstance(found, int | float) and not isinstance(found, bool):
            return float(found)
        self.unavailable[str(record.parsed.get(WHY_NONE) or "not computed")] += 1
        return None

    def _cluster(self, record: Record) -> str | None:
        """The image an item shares with others, as the benchmark's paired rows say."""
        if self.pairs is None:
            return None
        for row in self.pairs.paired_rows(record).values():
            if row.kind == "correct":
                return row.cluster
        return None

    def result(self) -> EpochsSummary:
        per_epoch = [EpochScore(epoch=k, n=self.epoch_n[k], errors=self.epoch_errors[k],
                                value=self.epoch_sums[k] / self.epoch_n[k]
                                if self.epoch_n[k] else None)
                     for k in range(1, self.epochs + 1)]
        values = [e.value for e in per_epoch if e.value is not None]
        epoch_sd = float(_sd(values)) if len(values) >= 2 else None
        means = Outcomes(1)
        firsts = Outcomes(1)
        repeated = Outcomes(3)
        for item, (total, squares, count) in self.items.items():
            cluster = self.clusters.get(item)
            means.add(item, (total / count,), cluster)
            if item in self.firsts:
                firsts.add(item, (self.firsts[item],), cluster)
            if count >= 2:
                repeated.add(item, (total, squares, count), cluster)
        summary = EpochsSummary(
            epochs=self.epochs, outcome=self.benchmark.headline_proportion() or "score",
            score="expected" if self.expected else "sampled",
            expected_unavailable=dict(self.unavailable) if self.unavailable else None,
            items=len(self.items), answers=sum(self.epoch_n), errors=sum(self.epoch_errors),
            item_means=_score(means), first_answers=_score(firsts), per_epoch=per_epoch,
            epoch_sd=epoch_sd)
        if len(repeated) < 2:
            summary.split_unavailable = (f"{len(repeated)} item{'s' * (len(repeated) != 1)} "
                                         "with two answers or more: no split")
            return summary
        clusters = repeated.clusters()
        _, rows = repeated.sorted()
        found = split(rows[:, 0], rows[:, 1], rows[:, 2], clusters)
        if found is not None:
            summary.split = _split(found, len(self.items))
        return summary


def _sd(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _score(rows: Outcomes) -> Score | None:
    if len(rows) == 0:
        return None
    values = rows.matrix()
    clusters = rows.clusters()
    found = summaries(values, mean_statistic, ["score"],
                      None if clusters.singletons else clusters)["score"]
    score = Score(value=float(values[:, 0].mean()), n=len(rows))
    if "unavailable" in found:
        score.ci95_unavailable = str(found["unavailable"])
    else:
        score.ci95 = [float(x) for x in found["ci95"]]
        score.ci95_clusters = found.get("clusters")
        score.ci95_n_clusters = found.get("n_clusters")
    return score


def _component(part: Part) -> Component:
    return Component(value=part.value, ci95=list(part.ci95) if part.ci95 else None)


def _split(found: Split, items: int) -> VarianceSplit:
    answers = found.answers_for_share(TARGET_SHARE)
    half = None
    if answers is not None:
        variance = found.variance_of_score(items, answers)
        half = Z95 * math.sqrt(variance) if variance is not None else None
    return VarianceSplit(
        items=found.items, answers_per_item=found.answers_per_item,
        between=_component(found.between), within=_component(found.within),
        within_share=_component(found.within_share), ci95_clusters=found.clusters,
        ci95_n_clusters=found.n_clusters, answers_for_tenth=answers,
        half_width_at_that=half,
        few_items=(f"only {found.items} items with two answers or more: the split's intervals "
                   f"hold their 95% from {SPLIT_HOLDS_FROM} items on (measured)")
        if found.items < SPLIT_HOLDS_FROM else None,
        one_pass_sd=math.sqrt(max(found.within.value, 0.0) / items))


def read(directory: Path) -> EpochsSummary | None:
    """epochs.json of a run directory (None: the run asked each item once); a file that is
    not one is a ValueError of one line naming it."""
    return read_summary(directory / FILE, EpochsSummary, MAX_FILE_BYTES)
