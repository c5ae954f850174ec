"""metrics.json for IllusionBench: `{"<protocol>": {"<subset>": {...}}}`, all fractions.

Per protocol and subset: `shape_recall` = share of shape-task samples scored correct (under
`original`: bucket == shape under the shape prompt); `scene_recall` = share of scene-task
samples correct (`original`: bucket == texture under the scene prompt), the reading of the
original's pickled per-class buckets that the paper's figure reports. Each task block has n,
n_errors, the recall, and the same per difficulty and per class (the task's own label: shape
class for the shape task, scene for the scene task). `original` adds the shape/texture/rest
distribution under both prompts (the shape-versus-scene bias view) and `quirks`, the other
variant of the rule on the same responses.

`pooled` is both tasks' answers together (the shape and the scene question of each image):
its recall's interval is a cluster bootstrap that draws images, since the two answers about
one image are not independent (`stats.bootstrap`); the per-task intervals, where each image
appears once, are the plain bootstrap's.

Failed requests count in n_errors and are left out of n and of every score; a recall with
n = 0 is absent and `unavailable` says why (never 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import Field, RootModel

from visioneval.benchmarks.illusionbench.prompts import offered
from visioneval.benchmarks.illusionbench.protocols import lmms_normalize
from visioneval.benchmarks.illusionbench.spec import DIFFICULTIES, FAMILY, ORIGINAL_FIXED
from visioneval.core.records import Record
from visioneval.core.runfiles import Interval, MetricsBlock
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries

BUCKETS = ("shape", "texture", "rest")


class Cell:
    """Scored and failed samples of one slice, and the sum of `correct` per rule (summed in
    journal order, so recalls are bit-identical to summing a list)."""

    __slots__ = ("n", "n_errors", "correct", "outcomes")

    def __init__(self, intervals: bool = False) -> None:
        self.n = 0
        self.n_errors = 0
        self.correct: dict[str, float] = {}
        # Per-sample correctness per rule, for the recall's bootstrap interval (headline
        # cells only: per-class and per-difficulty cells would multiply the cost).
        self.outcomes: dict[str, Outcomes] | None = {} if intervals else None

    def add(self, record: Record) -> None:
        if not record.ok:
            self.n_errors += 1
            return
        self.n += 1
        for rule, score in record.scores.items():
            self.correct[rule] = self.correct.get(rule, 0) + score["correct"]
            if self.outcomes is not None:
                self.outcomes.setdefault(rule, Outcomes(1)).add(
                    record.id, (float(score["correct"]),), image_key(record))

    def block(self, rule: str) -> dict[str, Any]:
        """n, n_errors and the recall of `rule` (absent with a reason when n = 0), with its
        standard error and 95% interval in headline cells."""
        block: dict[str, Any] = {"n": self.n, "n_errors": self.n_errors}
        if not self.n:
            block["unavailable"] = f"no scored samples ({self.n_errors} failed requests)"
        else:
            block["recall"] = self.correct[rule] / self.n
            kept = (self.outcomes or {}).get(rule)
            if kept is not None and len(kept) == self.n:
                attach(block, summaries(kept.matrix(), mean_statistic, ("recall",)))
        return block


def image_key(record: Record) -> str | None:
    """What identifies a record's image: its subset and image name (both tasks and every
    prompt family of one image share it); None (its own cluster) without a name."""
    name = (record.metadata or {}).get("image_name")
    return f"{record.group}/{name}" if name else None


def pooled_block(cells: Sequence[Cell], rule: str) -> dict[str, Any]:
    """The recall of `rule` over the answers of every task together, with a cluster
    bootstrap interval over images (absent with a reason when a task has no scored
    answer)."""
    n = sum(c.n for c in cells)
    block: dict[str, Any] = {"n": n, "n_errors": sum(c.n_errors for c in cells)}
    if any(not c.n for c in cells):
        block["unavailable"] = "a task has no scored samples: nothing to pool"
        return block
    block["recall"] = sum(c.correct[rule] for c in cells) / n
    kept = [(c.outcomes or {}).get(rule) for c in cells]
    if all(k is not None and len(k) == c.n for k, c in zip(kept, cells, strict=True)):
        merged = Outcomes(1)
        for k in kept:
            if k is not None:
                merged.extend(k)
        clusters = merged.clusters("image")
        block["n_images"] = clusters.count
        attach(block, summaries(merged.matrix(), mean_statistic, ("recall",), clusters))
    return block


class TaskTally:
    """One subset x prompt family x task, fed record by record: memory grows with the
    classes and difficulties, not with the samples."""

    def __init__(self) -> None:
        self.all = Cell(intervals=True)
        self.by_difficulty: dict[str, Cell] = {}
        self.by_class: dict[str, Cell] = {}
        self.buckets: dict[str, Counter[str]] = {}
        self.changed = 0  # scored answers the two variants of the original rule bucket apart

    def add(self, record: Record, task: str) -> None:
        self.all.add(record)
        self.by_difficulty.setdefault(record.metadata["difficulty"], Cell()).add(record)
        self.by_class.setdefault(record.target[task], Cell()).add(record)
        if record.ok:
            for rule in ("original", ORIGINAL_FIXED):
                if rule in record.parsed:
                    self.buckets.setdefault(rule, Counter())[record.parsed[rule]] += 1
            if record.parsed.get("original") != record.parsed.get(ORIGINAL_FIXED):
                self.changed += 1

    def block(self, rule: str) -> dict[str, Any]:
        """The task's recall overall, per difficulty and per class."""
        return self.all.block(rule) | {
            "per_difficulty": {d: self.by_difficulty[d].block(rule) for d in DIFFICULTIES
                               if d in self.by_difficulty},
            "per_class": {c: self.by_class[c].block(rule) for c in sorted(self.by_class)},
        }

    def distribution(self, rule: str) -> dict[str, Any]:
        """Shares of the shape/texture/rest buckets among scored records."""
        n = self.all.n
        if not n:
            return {"n": 0, "unavailable": "no scored samples"}
        counts = self.buckets.get(rule, Counter())
        return {"n": n} | {b: counts[b] / n for b in BUCKETS}


def not_offered(labels: dict[str, set[str]], family: str, subset: str) -> dict[str, list[str]]:
    """Labels of the data that the family's prompt does not list (compared normalised:
    case, `_`, `-` and punctuation ignored), e.g. `stationary` when `Stationery` is offered."""
    out = {}
    for task, seen in labels.items():
        options = {lmms_normalize(o) for o in offered(family, subset, task)}
        out[task] = sorted(label for label in seen if lmms_normalize(label) not in options)
    return out


def subset_block(by_task: dict[str, TaskTally], labels: dict[str, set[str]], rule: str,
                 subset: str) -> dict[str, Any]:
    """One protocol's metrics for one subset (records of the protocol's prompt family)."""
    tasks_out = {t: tally.block(rule) for t, tally in by_task.items()}
    block: dict[str, Any] = {"rule": rule}
    block |= {f"{t}_recall": b["recall"] for t, b in tasks_out.items() if "recall" in b}
    block |= tasks_out
    if len(by_task) > 1:
        block["pooled"] = pooled_block([t.all for t in by_task.values()], rule)
    block["labels_not_offered"] = not_offered(labels, FAMILY[rule], subset)
    if rule in ("original", ORIGINAL_FIXED):
        block["distribution"] = {f"{t}_prompt": tally.distribution(rule)
                                 for t, tally in by_task.items()}
        block["quirks"] = quirk_block(by_task, rule)
    return block


def quirk_block(by_task: dict[str, TaskTally], rule: str) -> dict[str, Any]:
    """The other variant of the original rule on the same responses, and the difference."""
    other = "original" if rule == ORIGINAL_FIXED else ORIGINAL_FIXED
    block: dict[str, Any] = {"rule": other}
    for task, tally in by_task.items():
        mine, theirs = tally.all.block(rule), tally.all.block(other)
        if "recall" in theirs:
            block[f"{task}_recall"] = theirs["recall"]
            block[f"{task}_delta"] = theirs["recall"] - mine["recall"]
            for stat in ("se", "ci95"):  # the variant's own interval, from the same samples
                if f"recall_{stat}" in theirs:
                    block[f"{task}_recall_{stat}"] = theirs[f"recall_{stat}"]
        block[f"{task}_changed"] = tally.changed
    return block


def summarize(records: Iterable[Record], protocols: Sequence[str], subsets: Sequence[str],
              tasks: Sequence[str], fix_quirks: bool) -> dict[str, Any]:
    """metrics.json from the records alone (the newest record per sample), in one pass."""
    tallies: dict[tuple[str, str, str], TaskTally] = {}
    # Every task's label of every record of a subset and family, whatever task the record
    # asked: the labels the data holds that the family's prompts would have to offer.
    labels: dict[tuple[str, str], dict[str, set[str]]] = {}
    for record in records:
        task, family = record.metadata["task"], record.metadata["family"]
        key = (record.group, family, task)
        if key not in tallies:
            tallies[key] = TaskTally()
        tallies[key].add(record, task)
        seen = labels.setdefault((record.group, family), {t: set() for t in tasks})
        for t in tasks:
            seen[t].add(record.target[t])
    out: dict[str, Any] = {}
    for protocol in protocols:
        rule = (ORIGINAL_FIXED if fix_quirks else "original") if protocol == "original" \
            else protocol
        family = FAMILY[rule]
        out[protocol] = {
            s: subset_block({t: tallies.get((s, family, t)) or TaskTally() for t in tasks},
                            labels.get((s, family)) or {t: set() for t in tasks}, rule, s)
            for s in subsets}
    return out


# -- metrics.json's shape -------------------------------------------------------------------


class RecallBlock(MetricsBlock):
    """A slice's counts and recall (`Cell.block`); the interval in headline cells only."""

    n: int
    n_errors: int
    unavailable: str | None = None
    recall: float | None = None
    recall_se: float | None = None
    recall_ci95: Interval | None = None
    recall_ci95_unavailable: str | None = None


class PooledRecall(RecallBlock):
    """Every task's answers together (`pooled_block`): the interval draws images."""

    n_images: int | None = Field(None, description="Images among the pooled answers: the "
                                 "clusters of the interval.")
    recall_ci95_clusters: str | None = Field(None, description="What the interval resamples "
                                             "as one: \"image\".")
    recall_ci95_n_clusters: int | None = Field(None, description="How many clusters.")


class TaskMetrics(RecallBlock):
    """A task's recall overall, per difficulty and per class (`TaskTally.block`)."""

    per_difficulty: dict[str, RecallBlock]
    per_class: dict[str, RecallBlock]


class Distribution(MetricsBlock):
    """Shares of the shape, texture and rest buckets among scored answers."""

    n: int
    unavailable: str | None = None
    shape: float | None = None
    texture: float | None = None
    rest: float | None = None


class Quirks(MetricsBlock):
    """The other variant of the original rule on the same answers (`quirk_block`)."""

    rule: str
    shape_recall: float | None = None
    shape_delta: float | None = None
    shape_recall_se: float | None = None
    shape_recall_ci95: Interval | None = None
    shape_changed: int | None = None
    scene_recall: float | None = None
    scene_delta: float | None = None
    scene_recall_se: float | None = None
    scene_recall_ci95: Interval | None = None
    scene_changed: int | None = None


class SubsetMetrics(MetricsBlock):
    """One protocol's block for one subset (`subset_block`); the original rule's adds the
    bucket distribution per prompt and the quirks."""

    rule: str
    shape_recall: float | None = None
    scene_recall: float | None = None
    shape: TaskMetrics | None = None
    scene: TaskMetrics | None = None
    pooled: PooledRecall | None = None
    labels_not_offered: dict[str, list[str]]
    distribution: dict[str, Distribution] | None = None
    quirks: Quirks | None = None


class IllusionBenchMetrics(RootModel[dict[str, dict[str, SubsetMetrics]]]):
    """metrics.json of IllusionBench: protocol -> subset -> block."""
