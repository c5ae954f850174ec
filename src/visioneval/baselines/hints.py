"""What an offline baseline may ask of a benchmark, outside the Benchmark protocol: a
benchmark offers a hint by having the method; the baseline checks for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class KnowsMajorityAnswers(Protocol):
    def majority_answers(self) -> dict[tuple[str, ...], str]:
        """The most common answer per option list (the builtin `majority` baseline)."""


@runtime_checkable
class ReadsPixels(Protocol):
    def reader(self) -> Callable[[str, bytes], str]:
        """A classical reader of its stimuli's pixels: (prompt, PNG bytes) -> the answer, a
        module-level function (worker processes run it). The builtin `reader` baseline."""


def pixel_reader(benchmark: Any) -> Callable[[str, bytes], str] | None:
    """The benchmark's pixel reader, or None when it has none."""
    return benchmark.reader() if isinstance(benchmark, ReadsPixels) else None


def majority_answers(benchmark: Any) -> dict[tuple[str, ...], str]:
    """The benchmark's majority answers, or none (the baseline then answers the first
    option of each prompt)."""
    return benchmark.majority_answers() if isinstance(benchmark, KnowsMajorityAnswers) else {}
