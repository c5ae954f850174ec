"""What an offline baseline may ask of a benchmark, outside the Benchmark protocol: a
benchmark offers a hint by having the method; the baseline checks for it."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class KnowsMajorityAnswers(Protocol):
    def majority_answers(self) -> dict[tuple[str, ...], str]:
        """The most common answer per option list (the builtin `majority` baseline)."""


def majority_answers(benchmark: Any) -> dict[tuple[str, ...], str]:
    """The benchmark's majority answers, or none (the baseline then answers the first
    option of each prompt)."""
    return benchmark.majority_answers() if isinstance(benchmark, KnowsMajorityAnswers) else {}
