"""How a benchmark answers a sample when one request is not enough (`Benchmark.solve`): a
`Solver` gets the sample and an `Ask`, the engine's request path (cache, retries,
counting), and returns what to record (`Solved`). The engine implements `Ask`; a benchmark
only names these types."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from visioneval.core.records import GenerationSettings, Request, Response, Sample

CacheIf = Callable[[Response], bool]
"""Whether a successful response may be cached (and a cached one reused): a judge's reply
that is not a verdict must not be replayed on the next run."""


class Ask(Protocol):
    """Send one request through the engine: cache, retries, counting. A failed request is
    a Response with its error, never an exception.
    `judge=True` sends it to the benchmark's judge model instead of the model under test;
    `panel=k` to the k-th of the benchmark's panel models (`Benchmark.panel`, 1-based; 0:
    none), whose answers are cached under that model's identity and counted under usage
    role `panelK`; asking for the judge and a panel model at once is a ValueError (a bug
    in the solver, not a failed request);
    `settings` are the run's generation settings, for a solver's own model requests;
    `run_dir` is the run directory, for a solver that writes files beside the journal (the
    layout benchmark's pictures)."""

    @property
    def settings(self) -> GenerationSettings: ...

    @property
    def run_dir(self) -> Path: ...

    def __call__(self, request: Request, cache_if: CacheIf | None = None, *,
                 judge: bool = False, panel: int = 0) -> Awaitable[Response]: ...


@dataclass(frozen=True, slots=True)
class Solved:
    """A solver's outcome: the response to record and, if the solver scored it, the scores
    (None: the engine's scorer scores `response.text`). `asked`: the sample the solver
    really sent, when it chose it as it ran (an adaptive method picks its stimulus from the
    answers so far): the record keeps the run's sample id and group, and the asked sample's
    target, prompt and metadata."""

    response: Response
    parsed: dict[str, Any] | None = None
    scores: dict[str, dict[str, float]] | None = None
    asked: Sample | None = None


Solver = Callable[[Sample, Ask], Awaitable[Solved]]
