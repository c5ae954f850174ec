"""A benchmark whose every sample is answered K times (`--epochs K`).

Answer k of an item is the item's sample with id `<id>@epoch<k>` (the first keeps its id),
asked with its own seed (`GenerationSettings.for_epoch`), so each is a request of its own
with a cache entry of its own: a cached run replays its K answers and a larger K sends only
the new ones. The benchmark never sees a repeated answer: its metrics are those of the first
answers, exactly a run of one epoch (the published protocol asks once), and the repeated
answers are summarized beside them (`epochs/summary.py`: the item means, their interval and
the variance split).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Container, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.capabilities import LearnsFromAnswers
from visioneval.core.epoch_ids import EPOCH, EPOCH_OF, epoch_id, epoch_of
from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.runfiles import BenchmarkPlan
from visioneval.core.wrapped import Wrapped
from visioneval.epochs.expected import solve_expected
from visioneval.epochs.summary import EpochCollector, EpochsSummary
from visioneval.variants.family import Varied
from visioneval.variants.family import rebuilt as variants_rebuilt

if TYPE_CHECKING:
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.runfiles import RunInfo
    from visioneval.core.solver import Solver
    from visioneval.variants.summary import VariantsSummary

MAX_EPOCHS = 1000


class Repeated(Wrapped):
    """`inner` (which may carry request variants) with every sample asked `epochs` times;
    everything else is the inner benchmark's (`Wrapped`)."""

    def __init__(self, inner: Benchmark[Any], epochs: int,
                 definition: BenchmarkDefinition | None = None, expected: bool = False):
        super().__init__(inner)
        self.epochs = epochs
        self.expected = expected
        self.definition = definition

    # -- what the engine runs ------------------------------------------------------------------
    @property
    def solve(self) -> Solver | None:
        if self.expected:  # the answer and its expected outcome (`--score expected`)
            return functools.partial(solve_expected, self.inner)
        return self.inner.solve

    @property
    def per_row(self) -> int:
        return self.inner.per_row * self.epochs

    def published_rows(self) -> PublishedRows | None:
        counts = self.inner.published_rows()
        return counts.times(self.epochs) if counts is not None else None

    def plan(self) -> BenchmarkPlan:
        update: dict[str, Any] = {"epochs": self.epochs} if self.epochs > 1 else {}
        if self.expected:
            update["score"] = "expected"
        return super().plan().model_copy(update=update)

    def total(self) -> int:
        return self.inner.total() * self.epochs

    def skip_answered(self, ids: Container[str]) -> None:
        if isinstance(self.inner, Varied):
            self.inner.skip_answered(ids)

    def samples(self) -> Iterator[Sample | SkippedRow]:
        """Each sample as the inner benchmark makes it, then its repeated answers (the same
        messages: no image is made or held twice)."""
        for item in self.inner.samples():
            if isinstance(item, SkippedRow):
                yield dataclasses.replace(item, samples=item.samples * self.epochs)
                continue
            yield item
            for epoch in range(2, self.epochs + 1):
                yield Sample(epoch_id(item.id, epoch), item.group, item.messages, item.target,
                             {**item.metadata, EPOCH: epoch, EPOCH_OF: item.id}, epoch)

    # -- metrics ------------------------------------------------------------------------------
    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        """The benchmark's own metrics, of the first answers."""
        return self.inner.summarize(r for r in records if epoch_of(r) == 1)

    def summarize_all(self, records: Iterable[Record]
                      ) -> tuple[dict[str, Any], VariantsSummary | None, EpochsSummary]:
        """The benchmark's metrics of the first answers, the variants' summary (with
        --variant) and the repeated answers' summary, in one pass over the records."""
        collector = EpochCollector(self.inner, self.definition, self.epochs, self.expected)

        def firsts() -> Iterator[Record]:
            for record in records:
                collector.add(record)
                if epoch_of(record) == 1:
                    yield record

        feed = firsts()
        variants: VariantsSummary | None = None
        if isinstance(self.inner, Varied):
            metrics, variants = self.inner.summarize_with_variants(feed)
        else:
            metrics = self.inner.summarize(feed)
        for _ in feed:  # what the benchmark did not read still counts for the epochs
            pass
        return metrics, variants, collector.result()


def with_epochs(benchmark: Benchmark[Any], epochs: int,
                definition: BenchmarkDefinition | None, expected: bool = False
                ) -> Benchmark[Any]:
    """`benchmark` with every sample asked `epochs` times and, with `expected`, each answer's
    expected outcome from its log-probabilities (itself for 1 and sampled answers); a
    benchmark that chooses its requests from the answers so far or asks more than one request
    per sample, or a K out of range, is a ValueError of one line."""
    inner = benchmark.inner if isinstance(benchmark, Repeated) else benchmark
    if not 1 <= epochs <= MAX_EPOCHS:
        raise ValueError(f"--epochs {epochs}: give 1 to {MAX_EPOCHS} answers per sample")
    if epochs == 1 and not expected:
        return inner
    if isinstance(inner, LearnsFromAnswers):
        raise ValueError(f"--epochs: {inner.name} chooses each request from the answers so "
                         "far (an adaptive method), so its samples are not asked again; use "
                         "its fixed design for repeated answers")
    if expected and inner.solve is not None:
        raise ValueError(f"--score expected reads the model's one answer to a sample; "
                         f"{inner.name} sends more than one request for some samples (a judge "
                         "or a repair): score it as sampled")
    return Repeated(inner, epochs, definition, expected)


def rebuilt(benchmark: Benchmark[Any], info: RunInfo,
            definition: BenchmarkDefinition | None) -> Benchmark[Any]:
    """A run's benchmark rebuilt from run.json (resume, merge, compare, a dry run of a
    resume) with the variants and the epochs the run recorded."""
    with_recorded = variants_rebuilt(benchmark, info, definition)
    return with_epochs(with_recorded, info.epochs or 1, definition,
                       expected=info.score == "expected")
