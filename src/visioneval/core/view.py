"""A run as a benchmark's report hooks read it (`ReadableRun`): its files and its records. The
report's `OpenedRun` (core/rundir.py) is one; the contract names this protocol so that what a
benchmark is does not depend on how a run directory is opened."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from visioneval.core.records import Record
from visioneval.core.runfiles import RunInfo


class ReadableRun(Protocol):
    @property
    def directory(self) -> Path: ...

    @property
    def info(self) -> RunInfo:
        """run.json."""

    @property
    def metrics(self) -> dict[str, Any]:
        """metrics.json."""

    @property
    def benchmark(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def title(self) -> str: ...

    def iter_records(self) -> Iterator[Record]:
        """One record per sample, streamed."""
