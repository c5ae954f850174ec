"""A run as a command: carry out the request, then print the tables, the cost and where
everything is; Ctrl-C, a spent --max-cost or a full disk say how to continue. The exit code
says how the run went."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from visioneval.backends.reasoning import OUT_OF_TOKENS
from visioneval.backends.served import describe
from visioneval.core import registry
from visioneval.core.benchmark import Benchmark
from visioneval.core.rundir import just_made
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RunLock, RunStore, WriteError
from visioneval.engine.runner import CostLimitReached, RunStopped
from visioneval.epochs import shown as epochs_shown
from visioneval.invocation import command
from visioneval.report.cost import cost_line
from visioneval.report.page import try_write_report
from visioneval.runs.execute import execute, run_directory
from visioneval.runs.exit_codes import (
    EXIT_COST_LIMIT,
    EXIT_INTERRUPTED,
    EXIT_STOPPED,
    EXIT_USAGE,
)
from visioneval.runs.output import Output
from visioneval.runs.session import SessionResult, price_remedies
from visioneval.runs.spec import RunSpec
from visioneval.runs.target import resume_command
from visioneval.terminal import error_line, line, print_command
from visioneval.variants import shown


def run(spec: RunSpec, output: Output) -> int:
    """A new run in this process (of its shard of the samples, or all of them)."""
    directory = run_directory(spec)
    lock = RunLock(directory)  # taken after preflight, by the session; held to the report
    try:
        return _execute(execute(spec, directory, output, lock), spec.build(), directory,
                        output)
    finally:
        lock.release()


def _execute(session: Coroutine[Any, Any, SessionResult], benchmark: Benchmark,
             directory: Path, output: Output) -> int:
    """Run the session; Ctrl-C keeps what finished and says how to continue."""
    def again() -> str:  # after the run started: run.json says whose benchmark it is
        return _resume_line(directory, benchmark.name)

    try:
        result = asyncio.run(session)
    except KeyboardInterrupt:
        print_command(output.err, f"interrupted: {_kept(directory)} samples are kept in "
                                  f"{directory}; continue with:", again(), style="yellow")
        return EXIT_INTERRUPTED
    except CostLimitReached as exc:
        print_command(output.err, f"stopped: {exc}. {_kept(directory)} samples are recorded in "
                                  f"{directory}; the rest were not sent (add --max-cost to "
                                  "limit the next session too). Continue with:", again(),
                      style="yellow")
        return EXIT_COST_LIMIT
    except RunStopped as exc:
        error_line(output.err, str(exc))
        print_command(output.err, f"{_kept(directory)} samples are recorded in {directory}; "
                                  "the rest were not sent. Continue with:", again(),
                      style="yellow")
        return EXIT_STOPPED
    except WriteError as exc:
        error_line(output.err, str(exc))
        print_command(output.err, "free some space, then continue with:", again(),
                      style="yellow")
        return EXIT_STOPPED
    code = report(result, output, benchmark=benchmark)
    return code if result.n_records else _nothing_evaluated(result, output)


def _nothing_evaluated(result: SessionResult, output: Output) -> int:
    """A run that recorded nothing (every row skipped) could not do its job: exit 2."""
    n = result.stats.skipped
    why = (f"every row was skipped ({n} {'row' if n == 1 else 'rows'}; see the lines above)"
           if n else "no sample was recorded")
    error_line(output.err, f"nothing was evaluated: {why}; {result.directory} holds the "
                           "empty run")
    return EXIT_USAGE


def _resume_line(directory: Path, name: str) -> str:
    """The command that continues the run in `directory` (of benchmark `name`)."""
    if (directory / "run.json").exists():
        return resume_command(RunStore.open(directory).info, directory)
    return resume_command(name, directory)


def _kept(directory: Path) -> int:
    counts = RunStore.open(directory).info.counts \
        if (directory / "run.json").exists() else None
    return counts.records if counts is not None else 0


def cache_line(sources: dict[str, int], info: RunInfo) -> str:
    """Where this session's cached answers came from: the runs that stored them, for the
    model identity that keys them."""
    last = info.sessions[-1].model_identity if info.sessions else None
    found = last or info.backend.identity
    identity = found.as_dict() if found is not None else {}
    runs = sorted(sources.items(), key=lambda kv: -kv[1])
    named = ", ".join(f"{n} from {run}" for run, n in runs[:3])
    more = f" and {sum(n for _, n in runs[3:])} from {len(runs) - 3} other runs" \
        if len(runs) > 3 else ""
    return (f"cached answers: {named}{more} (the same model: {describe(identity)}; "
            f"`{command('cache', 'show', '--model')} NAME` lists them)")


def report(result: SessionResult, output: Output, definition: registry.Named = None,
           benchmark: Benchmark | None = None) -> int:
    """The run's main table, its counts, cost and where everything is (the other tables:
    `visioneval show`); exit 1 if some samples ended in error. `definition`: the one the
    user named for the run (a merge of their own benchmark's shards); `benchmark`: the one
    that ran here, whose judges a missing price may name (a merge has none)."""
    console, err = output.console, output.err
    view = just_made(result.directory, definition)
    info = view.info
    view.shown.print_main_table(view, console)
    if result.variants is not None:  # what a run with --variant was asked for

        shown.show(result.variants, console, details=False)
    if result.epochs is not None:
        console.print()
        epochs_shown.show(result.epochs, console)
    stats = result.stats
    line(console, f"{result.n_records} samples recorded ({result.n_errors} errors, "
                  f"{stats.skipped} rows skipped, {stats.cache_hits} from cache, "
                  f"{stats.resumed} done before) -> {result.directory}")
    if info.stopping is not None:
        line(console, info.stopping.line())
    cost = info.counts.cost if info.counts else None
    line(console, cost_line(cost, stats.cache_hits))
    if cost is not None and cost.usd is None:
        for remedy in price_remedies(info, benchmark):  # once, not in every line
            line(console, f"  to price it: {remedy}")
    if stats.cache_sources:
        line(console, cache_line(stats.cache_sources, info))
    page = None
    if output.report:
        page = try_write_report(result.directory, definition, thumbnails=result.thumbnails,
                                rows=result.page_rows)
    if page is not None:
        line(console, f"report: {page}")
    more = "all tables (and the variants' chance lines)" if result.variants is not None \
        else "all tables"
    print_command(console, f"{more}:", command("show", result.directory))
    if stats.error_reasons:
        err.print("most common error reasons (this session):", highlight=False)
        for reason, count in stats.top_reasons():
            line(err, f"  {count:>6} x {reason}")
    if result.n_errors:
        cut = sum(n for reason, n in stats.error_reasons.items()
                  if reason.startswith(OUT_OF_TOKENS))
        if cut:
            line(err, f"{cut} of them spent all of --max-tokens {info.generation.max_tokens} "
                      "thinking: a resume asks with the same --max-tokens, so give these a new "
                      "run with a larger one", style="yellow")
        print_command(err, f"{result.n_errors} samples failed and are left out of the scores; "
                           "retry them with:", resume_command(info, result.directory),
                      style="yellow")
        return 1
    return 0
