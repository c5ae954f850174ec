"""A benchmark that wraps another to send more than it would (request variants, repeated
answers): every member of the benchmark contract is the inner benchmark's unless the wrapper
changes it, and any other attribute (`learn`, `majority_answers`, ...) is looked up there.
The contract's members are written out, not left to `__getattr__`: `Benchmark` has a
default for each, which would otherwise answer in the inner benchmark's place."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.runfiles import BenchmarkPlan

if TYPE_CHECKING:
    from pathlib import Path

    from visioneval.core.backend_spec import BackendSpec
    from visioneval.core.rowcounts import PublishedRows
    from visioneval.core.runfiles import RunInfo
    from visioneval.core.solver import Solver


class Wrapped(Benchmark[Any]):
    """`inner`, as it is: a subclass overrides what it changes."""

    def __init__(self, inner: Benchmark[Any]):
        super().__init__(inner.options)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.metric = inner.metric  # type: ignore[misc]

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    # -- what the engine runs ------------------------------------------------------------------
    @property
    def builtin_models(self) -> tuple[str, ...]:
        return self.inner.builtin_models

    @property
    def solve(self) -> Solver | None:
        return self.inner.solve

    @property
    def one_request_each(self) -> bool:
        return self.inner.one_request_each

    @property
    def judge(self) -> BackendSpec | None:
        return self.inner.judge

    @property
    def panel(self) -> tuple[BackendSpec, ...]:
        return self.inner.panel

    def panel_of(self, sample: Sample) -> int:
        return self.inner.panel_of(sample)

    @property
    def per_row(self) -> int:
        return self.inner.per_row

    def own_variants(self) -> dict[str, Any]:
        return self.inner.own_variants()

    def plan(self) -> BenchmarkPlan:
        return BenchmarkPlan.of(self.inner.plan(), self.inner.name)

    def dataset(self) -> dict[str, Any]:
        return self.inner.dataset()

    def published_rows(self) -> PublishedRows | None:
        return self.inner.published_rows()

    def total(self) -> int:
        return self.inner.total()

    def samples(self) -> Iterator[Sample | SkippedRow]:
        return self.inner.samples()

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        return self.inner.score(sample, text)

    # -- metrics ------------------------------------------------------------------------------
    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        return self.inner.summarize(records)

    def model_use(self) -> str | None:
        return self.inner.model_use()

    def headline_outcome(self, record: Record) -> float | None:
        return self.inner.headline_outcome(record)

    def headline_proportion(self) -> str | None:
        return self.inner.headline_proportion()

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return self.inner.write_tables(metrics, info, directory)
