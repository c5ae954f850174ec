"""What a benchmark's reader of another tool's logs hands the generic re-scorer.

A benchmark says which tools it can read (`capabilities.ReadsForeignLogs`); its reader
turns the tool's logged samples into the `Sample` its own run would have made and the
`Response` the tool recorded. The generic side (`visioneval.rescore.run`) knows no benchmark:
it scores each answer with the benchmark's own `score`, journals it and finishes the run."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from visioneval.core.records import Response, Sample, SkippedRow
from visioneval.io.lines import BadLines

if TYPE_CHECKING:
    from visioneval.core.benchmark import Benchmark


@dataclass(frozen=True)
class LogFile:
    """One file of a tool's per-sample output and the tool's task it holds."""

    path: Path
    task: str


@dataclass(frozen=True)
class RescoreRequest:
    """What the user gave besides the logs: a local copy of data a log only points at, and
    a model name to record instead of the one the log gives."""

    data_dir: Path | None = None
    model: str | None = None


@dataclass(frozen=True)
class Answered:
    """One logged sample as visioneval's run of the benchmark would have made it, and the
    response the tool recorded for it (an error when the tool's request failed)."""

    sample: Sample
    response: Response


Item = Answered | SkippedRow


@dataclass
class Source:
    """A benchmark's reading of a tool's logs: what run.json records and the answers,
    streamed (`items` is consumed once, in order)."""

    benchmark: Benchmark  # scores and summarizes; reads no data of its own
    definition: str  # module:attribute of the definition that rebuilds it (report, compare)
    options: dict[str, Any]
    dataset: dict[str, Any]
    generation: dict[str, Any]
    model: str
    tool_run: dict[str, Any]  # what the tool recorded about its run (version, date, ...)
    items: Iterator[Item]
    # After `items` is consumed: checks of the reading (e.g. the tool's own scores agree
    # with ours under its rule) and lines to print; both go to run.json's `rescored_from`.
    checks: Callable[[], dict[str, Any]] = field(default=lambda: {})
    notes: Callable[[], list[str]] = field(default=lambda: [])


class ForeignReader(Protocol):
    """One benchmark's reader of one tool's per-sample output."""

    @property
    def tool(self) -> str: ...

    def tasks(self) -> Sequence[str]:
        """The tool's task names this reader reads."""

    def other_benchmark(self, task: str) -> str | None:
        """Why a task whose name looks like this benchmark's is not read (a different
        benchmark of the same name, a variant visioneval does not define); None: unknown."""

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        """The logs (each of one of `tasks()`) as a Source; a line that cannot be read is
        reported to `bad` and skipped, never raised."""
