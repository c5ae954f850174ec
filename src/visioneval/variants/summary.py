"""The variants beside the original (variants.json): each variant's metrics on the samples
both families answered, with 95% bootstrap intervals, a paired test against the original
(McNemar's exact test for a 0/1 outcome, a paired bootstrap for macro F1 or partial credit),
and for a variant that leaves nothing of the image (blind, blank) its score against chance
and the samples it still answered correctly.

The metrics are those the benchmark pairs run against run (`PairsRecords.paired_rows`; a
benchmark without them: its `metric` over all samples), so a variant is read in the
benchmark's own headline terms. Memory: a few numbers per sample and family.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from visioneval.core.accuracy import Tally
from visioneval.core.capabilities import KnowsChance, PairsRecords
from visioneval.core.records import Record
from visioneval.core.sidefiles import read_summary
from visioneval.core.variant_ids import as_original, family_of
from visioneval.stats.paired import (
    PairedCollector,
    PairedResult,
    PairedRow,
    bootstrap_difference,
    interval_of,
    paired_test,
    value_of,
)
from visioneval.variants.kinds import Variant

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from visioneval.core.benchmark import BenchmarkDefinition
    from visioneval.stats.bootstrap import Clusters

FILE = "variants.json"
IDS_KEPT = 200  # samples answered correctly without the image listed in variants.json
NAMES = ("as stored", "in the variant")
NO_CHANCE = ("this benchmark states no chance level (a benchmark gives one with "
             "`chance_rows`)")


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Estimate(_Closed):
    """A metric's value with its 95% bootstrap interval (fractions); when samples of one
    image were resampled together, what a cluster was and how many there were."""

    value: float
    ci95: list[float] | None = None
    ci95_clusters: str | None = None
    ci95_n_clusters: int | None = None


class Difference(_Closed):
    """A paired comparison: the variant minus the other, its test and verdict at 5%."""

    test: str
    difference: float
    ci95: list[float] | None = None
    p: float | None = None
    significant: bool
    detail: str

    @classmethod
    def of(cls, result: PairedResult) -> Difference:
        return cls(test=result.test, difference=result.difference,
                   ci95=list(result.interval) if result.interval else None,
                   p=result.p_value, significant=result.significant,
                   detail=f"{result.detail}; {result.note}" if result.note else result.detail)


class VariantMetric(_Closed):
    """One metric under one variant, on the `n` samples both families answered."""

    metric: str
    kind: Literal["correct", "macro_f1"]
    n: int
    original: Estimate | None = None
    variant: Estimate | None = None
    versus_original: Difference | None = None
    chance: Estimate | None = None
    versus_chance: Difference | None = None
    unavailable: str | None = None


class AnsweredWithoutImage(_Closed):
    """Samples a variant without the image still answered correctly (by `metric`): items a
    model can answer from the text alone, candidates to leave out of a cleaner subset."""

    metric: str
    count: int
    n: int
    ids: list[str]
    ids_listed: int


class VariantResult(_Closed):
    name: str
    kind: str
    transform: str
    axis: str | None = None
    axis_value: float | None = None
    removes_image: bool = False
    n_records: int
    n_errors: int
    metrics: list[VariantMetric]
    answered_without_image: AnsweredWithoutImage | None = None


class VariantsSummary(_Closed):
    """variants.json: every variant of the run beside the original family."""

    variants: list[VariantResult]
    original_records: int
    original_errors: int
    chance_rule: str | None = None
    chance_unavailable: str | None = None

    def variant(self, name: str) -> VariantResult | None:
        return next((v for v in self.variants if v.name == name), None)


class VariantCollector:
    """Fed every record of a run once (`add`); `result` is the summary."""

    def __init__(self, variants: Sequence[Variant], definition: BenchmarkDefinition | None,
                 metric: str = "correct"):
        self.variants = {v.name: v for v in variants}
        self.pairs = definition if isinstance(definition, PairsRecords) else None
        self.chance = definition if isinstance(definition, KnowsChance) else None
        self.metric = metric
        self.default = Tally(metric)  # a benchmark that pairs nothing: its `metric`
        self.rows: dict[str, PairedCollector] = {"": PairedCollector()}
        self.rows.update({name: PairedCollector() for name in self.variants})
        self.chance_rows = PairedCollector()
        self.records: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.right_blind: dict[str, list[str]] = {n: [] for n, v in self.variants.items()
                                                  if v.removes_image}
        self.right_metric: dict[str, set[str]] = {}
        self.right_scored: Counter[str] = Counter()

    def add(self, record: Record) -> None:
        """Take one record, of any family."""
        family = family_of(record) or ""
        if family not in self.rows:  # a variant the run no longer asks for
            return
        self.records[family] += 1
        if not record.ok:
            self.errors[family] += 1
            return
        original = as_original(record)
        rows = self._paired(original)
        self.rows[family].add(original.id, rows)
        if family == "" and self.chance is not None:
            self.chance_rows.add(original.id, self.chance.chance_rows(original))
        if family in self.right_blind:
            self._right_blind(family, original.id, rows)

    def _paired(self, record: Record) -> dict[str, PairedRow]:
        if self.pairs is not None:
            return self.pairs.paired_rows(record)
        return {self.metric: PairedRow("correct", (self.default.score(record),))}

    def _right_blind(self, family: str, sample_id: str, rows: dict[str, PairedRow]) -> None:
        key = next((k for k, row in rows.items() if row.kind == "correct"), None)
        if key is None:  # a sample the benchmark scores no 0/1 outcome of (a control row)
            return
        self.right_scored[family] += 1
        self.right_metric.setdefault(family, set()).add(key)
        if rows[key].values[0] >= 1.0:
            self.right_blind[family].append(sample_id)

    def result(self) -> VariantsSummary:
        original = self.rows[""]
        out = []
        for name, variant in self.variants.items():
            mine = self.rows[name]
            metrics = [self._metric(key, kind, original, mine, variant.removes_image)
                       for key, kind in original.metrics()]
            right = None
            if name in self.right_blind:
                found = sorted(self.right_blind[name])
                scored = self.right_scored[name]
                right = AnsweredWithoutImage(
                    metric=", ".join(sorted(self.right_metric.get(name, {self.metric}))),
                    count=len(found),
                    n=scored, ids=found[:IDS_KEPT], ids_listed=min(len(found), IDS_KEPT))
            axis = variant.axis
            out.append(VariantResult(
                name=name, kind=variant.kind, transform=variant.transform(),
                axis=axis[0] if axis else None, axis_value=axis[1] if axis else None,
                removes_image=variant.removes_image, n_records=self.records[name],
                n_errors=self.errors[name], metrics=metrics, answered_without_image=right))
        return VariantsSummary(
            variants=out, original_records=self.records[""], original_errors=self.errors[""],
            chance_rule=self.chance.chance_rule if self.chance is not None else None,
            chance_unavailable=None if self.chance is not None else NO_CHANCE)

    def _metric(self, key: str, kind: Literal["correct", "macro_f1"],
                original: PairedCollector, mine: PairedCollector,
                removes_image: bool) -> VariantMetric:
        if key not in mine.rows:
            return VariantMetric(metric=key, kind=kind, n=0,
                                 unavailable="no answer of this variant was scored")
        both = original.rows[key].only(mine.rows[key].digests())
        ids, a = both.sorted()
        ids_b, b = mine.rows[key].only(ids).sorted()
        n = len(ids_b)
        if n < 2:
            return VariantMetric(metric=key, kind=kind, n=n,
                                 unavailable=f"{n} sample(s) answered in both forms: a "
                                 "paired test needs two")
        # One image's samples resample together (the original's images: a variant's
        # samples are the same samples, its image changed).
        clusters = both.clusters()
        found = VariantMetric(metric=key, kind=kind, n=n,
                              original=_estimate(kind, a, clusters),
                              variant=_estimate(kind, b, clusters),
                              versus_original=Difference.of(
                                  paired_test(kind, a, b, key, NAMES, clusters)))
        if removes_image and self.chance is not None and key in self.chance_rows.rows:
            _, c = self.chance_rows.rows[key].only(ids_b).sorted()
            if len(c) == n:
                found.chance = _estimate(kind, c, clusters)
                found.versus_chance = Difference.of(bootstrap_difference(
                    kind, c, b, key, None if clusters.singletons else clusters))
        return found


def _estimate(kind: Literal["correct", "macro_f1"], rows: np.ndarray,
              clusters: Clusters) -> Estimate:
    if clusters.singletons:
        interval = interval_of(kind, rows)
        return Estimate(value=value_of(kind, rows), ci95=list(interval) if interval else None)
    interval = interval_of(kind, rows, clusters)
    return Estimate(value=value_of(kind, rows), ci95=list(interval) if interval else None,
                    ci95_clusters=clusters.by, ci95_n_clusters=clusters.count)


MAX_FILE_BYTES = 16_000_000  # variants.json holds a few numbers per variant and metric


def read(directory: Path) -> VariantsSummary | None:
    """variants.json of a run directory (None: the run has no variants); a file that is not
    one is a ValueError of one line naming it."""
    return read_summary(directory / FILE, VariantsSummary, MAX_FILE_BYTES)
