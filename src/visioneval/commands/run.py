"""A run as a command: carry out the request, then print the tables, the cost and where
everything is; Ctrl-C, a spent --max-cost or a full disk say how to continue. The exit code
says how the run went."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from rich.markup import escape

from visioneval.backends.reasoning import OUT_OF_TOKENS
from visioneval.backends.served import describe
from visioneval.core.benchmark import Benchmark
from visioneval.core.runfiles import CostInfo, RunInfo
from visioneval.core.store import RunLock, RunStore, WriteError
from visioneval.cost.money import usd
from visioneval.engine.runner import CostLimitReached, RunStopped
from visioneval.invocation import command
from visioneval.runs.execute import new_session, run_directory
from visioneval.runs.output import Output
from visioneval.runs.request import RunRequest
from visioneval.runs.target import resume_command
from visioneval.session import SessionResult

EXIT_INTERRUPTED = 130
EXIT_USAGE = 2
EXIT_STOPPED = 2  # the run could not go on (refused key): as for a run that cannot start
EXIT_COST_LIMIT = 3  # --max-cost was spent: what finished is recorded, --resume continues


def run(request: RunRequest, output: Output) -> int:
    """A new run in this process (of its shard of the samples, or all of them)."""
    directory = run_directory(request)
    lock = RunLock(directory)  # taken after preflight, by the session; held to the report
    try:
        return _execute(new_session(request, directory, output, lock), request.benchmark,
                        directory, output)
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
        output.err.print(f"[yellow]interrupted: {_kept(directory)} samples are kept in "
                         f"{directory}; continue with: {escape(again())}[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_INTERRUPTED
    except CostLimitReached as exc:
        output.err.print(f"[yellow]stopped: {escape(str(exc))}. {_kept(directory)} samples are "
                         f"recorded in {directory}; the rest were not sent. Continue with: "
                         f"{escape(again())} (add --max-cost to limit that session too)[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_COST_LIMIT
    except RunStopped as exc:
        output.err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        output.err.print(f"[yellow]{_kept(directory)} samples are recorded in {directory}; "
                         f"the rest were not sent. Continue with: {escape(again())}[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_STOPPED
    except WriteError as exc:
        output.err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                         soft_wrap=True)
        output.err.print(f"[yellow]free some space, then continue with: {escape(again())}[/]",
                         highlight=False, soft_wrap=True)
        return EXIT_STOPPED
    code = report(result, benchmark, output)
    return code if result.n_records else _nothing_evaluated(result, output)


def _nothing_evaluated(result: SessionResult, output: Output) -> int:
    """A run that recorded nothing (every row skipped) could not do its job: exit 2."""
    n = result.stats.skipped
    why = (f"every row was skipped ({n} {'row' if n == 1 else 'rows'}; see the lines above)"
           if n else "no sample was recorded")
    output.err.print(f"[bold red]error:[/] nothing was evaluated: {why}; {result.directory} "
                     "holds the empty run", highlight=False, soft_wrap=True)
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


def cost_line(cost: CostInfo | None, cache_hits: int = 0) -> str:
    """The run's cost as run.json says it (all sessions): dollars and where they come from,
    or why it is unknown; per group when there are several; cached answers are free."""
    cached = (f"; {cache_hits} answers from the cache cost nothing this session"
              if cache_hits else "")
    if cost is None:
        return "cost: not recorded"
    if cost.usd is None:
        return f"cost: unknown ({cost.unavailable or 'no reason recorded'}){cached}"
    groups = cost.groups or {}
    per = ("; per group: " + ", ".join(f"{g} {usd(v)}" for g, v in groups.items())
           if len(groups) > 1 else "")
    return f"cost: {usd(cost.usd)} ({cost.source}){per}{cached}"


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


def report(result: SessionResult, benchmark: Benchmark, output: Output) -> int:
    """Print the tables and where everything is; exit 1 if some samples ended in error."""
    console, err = output.console, output.err
    info = RunStore.open(result.directory).info
    benchmark.print_summary(result.metrics, info, console)
    if result.variants is not None:
        from visioneval.variants.shown import show

        show(result.variants, console)
    stats = result.stats
    console.print(
        f"{result.n_records} samples recorded ({result.n_errors} errors, {stats.skipped} rows "
        f"skipped, {stats.cache_hits} from cache, {stats.resumed} done before) -> "
        f"[bold]{result.directory}[/]", highlight=False, soft_wrap=True)
    if info.stopping is not None:
        console.print(info.stopping.line(), highlight=False, soft_wrap=True, markup=False)
    console.print(cost_line(info.counts.cost if info.counts else None, stats.cache_hits),
                  highlight=False, soft_wrap=True, markup=False)
    if stats.cache_sources:
        console.print(cache_line(stats.cache_sources, info), highlight=False, soft_wrap=True,
                      markup=False)
    page = None
    if output.report:
        from visioneval.report.page import try_write_report  # only when a page is written

        page = try_write_report(result.directory, thumbnails=result.thumbnails)
    if page is not None:
        console.print(f"report: [bold]{page}[/]", highlight=False, soft_wrap=True)
    if stats.error_reasons:
        err.print("most common error reasons (this session):", highlight=False)
        for reason, count in stats.top_reasons():
            err.print(f"  {count:>6} x {reason}", highlight=False, soft_wrap=True,
                      markup=False)
    if result.n_errors:
        cut = sum(n for reason, n in stats.error_reasons.items()
                  if reason.startswith(OUT_OF_TOKENS))
        if cut:
            err.print(f"[yellow]{cut} of them spent all of --max-tokens "
                      f"{info.generation.max_tokens} thinking: a resume "
                      "asks with the same --max-tokens, so give these a new run with a "
                      "larger one[/]", highlight=False, soft_wrap=True)
        err.print(f"[yellow]{result.n_errors} samples failed and are left out of the scores; "
                  f"retry them with: {escape(resume_command(info, result.directory))}[/]",
                  highlight=False, soft_wrap=True)
        return 1
    return 0
