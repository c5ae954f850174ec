"""A benchmark with its request variants (`Varied`): every sample sent as stored and again in
each variant's form, as a family of its own on the same rows.

A variant's sample is the original's with its messages changed, its id `<id>@<variant>`, its
group `<group> [<variant>]` and the variant named in its metadata (`variant`, `variant_of`).
The benchmark never sees a variant: it makes and scores its samples as always, its metrics
are computed from the original family alone (so they stay the published protocol's), and the
variants are summarized beside them (`variants/summary.py`). The variant images are made in
worker threads a few samples behind the original, never on the original's path.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Container, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.capabilities import LearnsFromAnswers
from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.runfiles import BenchmarkPlan
from visioneval.core.variant_ids import (
    VARIANT,
    VARIANT_OF,
    VARIANT_OF_GROUP,
    family_of,
    variant_group,
    variant_id,
)
from visioneval.core.wrapped import Wrapped
from visioneval.io.images import ImageError
from visioneval.variants.kinds import ImageMemo, Variant, parse
from visioneval.variants.summary import VariantCollector

if TYPE_CHECKING:
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.runfiles import RunInfo
    from visioneval.variants.summary import VariantsSummary

LOOKAHEAD = 16  # original samples whose variants may be in the making at once
WORKERS = 2  # threads making variant images (Pillow's encoders release the GIL)


class Varied(Wrapped):
    """`inner` with `variants`; everything else is the inner benchmark's (`Wrapped`).
    `definition` says how its records pair (`PairsRecords`) and what chance is
    (`KnowsChance`), for the summary."""

    def __init__(self, inner: Benchmark[Any], variants: Sequence[Variant],
                 definition: BenchmarkDefinition | None = None):
        super().__init__(inner)
        self.variants = tuple(variants)
        self.definition = definition
        self._answered: Container[str] = ()

    # -- what the engine runs ------------------------------------------------------------------
    @property
    def per_row(self) -> int:
        return self.inner.per_row * (1 + len(self.variants))

    def published_rows(self) -> PublishedRows | None:
        counts = self.inner.published_rows()
        return counts.times(1 + len(self.variants)) if counts is not None else None

    def plan(self) -> BenchmarkPlan:
        return super().plan().model_copy(update={"variants": [v.info() for v in self.variants]})

    def total(self) -> int:
        return self.inner.total() * (1 + len(self.variants))

    def skip_answered(self, ids: Container[str]) -> None:
        """A resumed run's answered sample ids: their variant images are not made again."""
        self._answered = ids

    def samples(self) -> Iterator[Sample | SkippedRow]:
        """Each original sample as it comes, then its variants once their images are made
        (in worker threads, at most LOOKAHEAD originals behind)."""
        memo = ImageMemo()
        pending: deque[Future[list[Sample | SkippedRow]]] = deque()
        families = 1 + len(self.variants)
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="variants") as pool:
            try:
                for item in self.inner.samples():
                    if isinstance(item, SkippedRow):
                        yield dataclasses.replace(item, samples=item.samples * families)
                        continue
                    yield item
                    pending.append(pool.submit(self._made, item, memo))
                    while pending and (pending[0].done() or len(pending) > LOOKAHEAD):
                        yield from pending.popleft().result()
                while pending:
                    yield from pending.popleft().result()
            finally:
                for future in pending:
                    future.cancel()

    def _made(self, sample: Sample, memo: ImageMemo) -> list[Sample | SkippedRow]:
        """The sample in every variant's form (a variant whose image cannot be made is a
        skipped row naming it); those a resumed run has answered are not made again."""
        out: list[Sample | SkippedRow] = []
        for variant in self.variants:
            made_id = variant_id(sample.id, variant.name)
            group = variant.group(sample.group)
            if made_id in self._answered:
                out.append(Sample(made_id, group, (), sample.target, {}))
                continue
            try:
                messages = variant.messages(sample.messages, memo)
            except (ImageError, OSError, ValueError) as exc:
                out.append(SkippedRow(group, made_id, f"variant {variant.name}: {exc}"))
                continue
            meta = {**sample.metadata, **variant.metadata(), VARIANT: variant.name,
                    VARIANT_OF: sample.id}
            if group != variant_group(sample.group, variant.name):
                meta[VARIANT_OF_GROUP] = sample.group
            out.append(Sample(made_id, group, messages, sample.target, meta))
        return out

    # -- metrics ----------------------------------------------------------------------------
    def _benchmark_reads(self, record: Record) -> bool:
        """Whether the benchmark's own metrics read this record: the original family's, and
        the variants the benchmark reads itself (`read_by_benchmark`)."""
        family = family_of(record)
        return family is None or any(v.read_by_benchmark for v in self.variants
                                     if v.name == family)

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        """The benchmark's own metrics, of the records it reads (`_benchmark_reads`)."""
        return self.inner.summarize(r for r in records if self._benchmark_reads(r))

    def summarize_with_variants(self, records: Iterable[Record]
                                ) -> tuple[dict[str, Any], VariantsSummary]:
        """The benchmark's metrics of the original family and the variants' summary, in one
        pass over the records."""
        collector = VariantCollector(self.variants, self.definition, self.inner.metric)

        def originals() -> Iterator[Record]:
            for record in records:
                collector.add(record)
                if self._benchmark_reads(record):
                    yield record

        feed = originals()
        metrics = self.inner.summarize(feed)
        for _ in feed:  # what the benchmark did not read still counts for the variants
            pass
        return metrics, collector.result()


def with_variants(benchmark: Benchmark[Any], given: Sequence[str],
                  definition: BenchmarkDefinition | None) -> Benchmark[Any]:
    """`benchmark` with the variants `--variant` names (itself when none); a name that is
    not a variant, or a benchmark that cannot take them, is a ValueError of one line."""
    inner, already = (benchmark.inner, list(benchmark.variants)) \
        if isinstance(benchmark, Varied) else (benchmark, [])
    named = {v.name: v for v in already}
    variants = already + [v for v in parse(given, {**inner.own_variants(), **named})
                          if v.name not in named]
    if not variants:
        return benchmark
    if isinstance(benchmark, Varied) and len(variants) == len(already):
        return benchmark
    if isinstance(benchmark, LearnsFromAnswers):
        raise ValueError(f"--variant: {benchmark.name} chooses each request from the answers "
                         "so far (an adaptive method), which the changed requests would disturb; "
                         "use its fixed design for variants")
    return Varied(inner, variants, definition)


def rebuilt(benchmark: Benchmark[Any], info: RunInfo,
            definition: BenchmarkDefinition | None) -> Benchmark[Any]:
    """A run's benchmark rebuilt from run.json (resume, compare, a dry run of a resume)
    with the variants the run recorded."""
    if not info.variants:
        return benchmark
    return with_variants(benchmark, [v.name for v in info.variants], definition)
