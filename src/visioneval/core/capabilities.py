"""What only some benchmarks have, each a small protocol a definition opts into by having its
members (no registration, no base class): callers ask `isinstance(definition, HasPublished)`
and leave the feature out for a definition without it.

- `HasPublished`: the paper's published numbers (`visioneval reference`, `compare
  --reference paper`).
- `ReadsForeignLogs`: readers of other tools' per-sample logs (`visioneval rescore`).
- `MakesSyntheticData`: a small offline dataset in the real schema (`visioneval data
  synth-NAME`).
- `HasDemo`: the offline `visioneval demo`.
- `PairsRecords`: the metrics `visioneval compare` tests run against run, sample by sample.
- `KnowsChance`: what a uniform guess scores (the blind control against chance).
- `ExplainsGap`: its headline under each protocol and label set, in the terms of a
  published column (`visioneval explain`: from the paper's number to a run's); `SharesGap`
  (on a benchmark): each unit's part of those headlines, for paired intervals.
- `LearnsFromAnswers` (on a benchmark, not its definition): a benchmark whose next requests
  depend on the answers so far (adaptive placement) is told a resumed run's earlier answers.

This module names the base contract and the foreign-log types; neither names it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from visioneval.core.benchmark import Benchmark

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from visioneval.core.foreign import ForeignReader
    from visioneval.core.gap import GapHeadlines, GapUnit
    from visioneval.core.published import PublishedTable, RunBeside
    from visioneval.core.records import Record
    from visioneval.core.view import ReadableRun
    from visioneval.stats.paired import PairedRow


@runtime_checkable
class HasPublished(Protocol):
    def published(self) -> PublishedTable:
        """The paper's published numbers with their provenance."""

    def beside_published(self, view: ReadableRun) -> RunBeside:
        """A run laid out as `published()`'s columns: the published setting it corresponds
        to, its value per column, and every run setting that differs from the published
        protocol."""


@runtime_checkable
class ExplainsGap(Protocol):
    def gap_headlines(self, metrics: dict[str, Any]) -> GapHeadlines | None:
        """The run's headline under each protocol and label set its metrics hold (None: the
        metrics have none, e.g. every request failed)."""


@runtime_checkable
class SharesGap(Protocol):
    """On a benchmark (not its definition): each resampling unit's part of every headline
    `ExplainsGap` reads, so `visioneval explain` draws paired intervals for its steps."""

    def gap_units(self, records: Iterable[Record]) -> Iterator[GapUnit]:
        """The units of these records (one family: the stored images' or one variant's,
        seen as the original's)."""


@runtime_checkable
class ReadsForeignLogs(Protocol):
    def foreign_logs(self) -> dict[str, ForeignReader]:
        """Readers of other tools' per-sample outputs for this benchmark, by tool name
        (e.g. "lmms-eval"), for `visioneval rescore`."""


@runtime_checkable
class MakesSyntheticData(Protocol):
    @property
    def synth_help(self) -> str:
        """The help of `visioneval data synth-NAME`."""

    @property
    def synth_rows(self) -> int:
        """Its default rows per part."""

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        """Write the offline dataset into `out`; the lines to print."""


@dataclass(frozen=True)
class Demo:
    """What `visioneval demo` runs offline (with the builtin `demo_model`): a benchmark and
    what to say before and after; `then`: a command to try next, on a line of its own
    after `after` (which then ends in ":")."""
    benchmark: Benchmark
    before: str
    after: str
    then: str = ""


@runtime_checkable
class HasDemo(Protocol):
    @property
    def demo_model(self) -> str:
        """The builtin model the demo runs."""

    def demo(self, cache_root: Path, n: int, seed: int) -> Demo:
        """The offline demo (`visioneval demo`, for the benchmark the registry names)."""


@runtime_checkable
class PairsRecords(Protocol):
    def paired_rows(self, record: Record) -> dict[str, PairedRow]:
        """A scored record's outcomes for `visioneval compare`'s paired tests, by metric
        name."""


@runtime_checkable
class LearnsFromAnswers(Protocol):
    """A benchmark whose solver chooses what to ask from the answers so far (an adaptive
    psychophysical method): before a resumed run's session, it is given the answers that
    run already has, so the session goes on from where the last one stopped."""

    def learn(self, record: Record) -> None:
        """One answered record of the run (the latest for its sample)."""


@runtime_checkable
class KnowsChance(Protocol):
    """A benchmark whose answers have a chance level: what a guess picked uniformly among
    the sample's choices scores, in the metrics its `paired_rows` names (the "answerable
    without the image" control compares a blind run against it)."""

    @property
    def chance_rule(self) -> str:
        """What chance means here, in one sentence (shown beside the numbers)."""

    def chance_rows(self, record: Record) -> dict[str, PairedRow]:
        """The expected outcome of a uniform guess for this record's sample, as rows of
        `paired_rows`' metrics (fractions: an expected 0/1 outcome, expected TP/FP/FN)."""
