"""Whether a run can go through the provider's batch API (`--batch`), and its setup.

A batch holds one request per sample, written before any answer is known: a benchmark that
asks more than that (a solver that repairs or samples, a judge, a panel, an adaptive method
that picks the next stimulus from the answers) cannot be sent in batches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from visioneval.backends.batch.clients import batch_client
from visioneval.backends.batch.clients import refusal as backend_refusal
from visioneval.core.capabilities import LearnsFromAnswers
from visioneval.engine.batch_runner import BatchSetup

if TYPE_CHECKING:
    from visioneval.backends.base import Backend
    from visioneval.backends.registry import BackendSpec
    from visioneval.core.benchmark import Benchmark
    from visioneval.runs.output import Output


MAX_COST_REFUSED = ("--max-cost stops sending request by request, and a batch is sent at "
                    "once: see its cost with --dry-run instead")


def refusal(benchmark: Benchmark, spec: BackendSpec) -> str | None:
    """Why this run cannot use --batch, in one line (None: it can)."""
    asks_more = benchmark.solve is not None or benchmark.judge is not None or \
        bool(benchmark.panel) or isinstance(benchmark, LearnsFromAnswers)
    if asks_more:
        return (f"--batch sends one request per sample, and {benchmark.name} asks more (a "
                "solver, a judge, a panel or an adaptive method): run it without --batch")
    return backend_refusal(spec)


def batch_setup(backend: Backend, output: Output) -> BatchSetup:
    """The batch client on the run's own backend; its lines go where the run talks."""
    def say(line: str) -> None:
        output.err.print(line, highlight=False, markup=False)

    return BatchSetup(batch_client(backend), say)
