"""Running a suite's plan: its lanes side by side in one event loop, each lane's runs one after
another, every run an ordinary session (new, or resumed where its directory holds one) on
one shared progress display. A run that fails (its server down, its data missing) is
recorded as failed and the others go on; running the suite again resumes what is not
finished."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from visioneval import terminal
from visioneval.backends.base import PreflightError
from visioneval.core.benchmark import Benchmark
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RUN_FILE, RunDirError, RunLock, RunStore, write_json
from visioneval.engine.cache import CacheError
from visioneval.engine.progress import ProgressBoard
from visioneval.engine.runner import RunStopped
from visioneval.epochs.family import Repeated
from visioneval.io.parquet import DataError
from visioneval.report.page import try_write_report
from visioneval.runs import execute as runs_execute
from visioneval.runs.execute import Continuing
from visioneval.runs.output import Output
from visioneval.runs.session import nothing_to_evaluate
from visioneval.suite.plan import PlannedRun, SuitePlan
from visioneval.terminal import line
from visioneval.variants.family import Varied

SUITE_FILE = "suite.json"
FAILURES = (PreflightError, DataError, RunDirError, CacheError, RunStopped, ValueError,
            OSError)
"""What ends one run of a suite, not the suite: the run is recorded as failed, with why."""


@dataclass(frozen=True)
class RunOutcome:
    run: PlannedRun
    status: str  # finished, finished with errors, done before, failed
    records: int = 0
    errors: int = 0
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.run.label, "benchmark": self.run.benchmark,
                "model": self.run.model.label, "setting": dict(self.run.setting),
                "directory": str(self.run.directory), "status": self.status,
                "records": self.records, "errors": self.errors,
                **({"message": self.message} if self.message else {})}


class SuiteRecord:
    """suite.json in the suite's folder: its runs and each one's outcome so far, rewritten
    (atomically) as runs end, so an interrupted suite says where it stood."""

    def __init__(self, plan: SuitePlan, source: str):
        self.plan = plan
        self.info: dict[str, Any] = {"suite_format": 1, "name": plan.name, "source": source,
                                     "started_at": _now(), "status": "running",
                                     "runs": [_planned(r) for r in plan.runs]}

    def set(self, outcome: RunOutcome) -> None:
        index = self.plan.runs.index(outcome.run)
        self.info["runs"][index] = outcome.as_dict()
        self.save()

    def end(self, status: str) -> None:
        self.info |= {"status": status, "ended_at": _now()}
        self.save()

    def save(self) -> None:
        self.plan.out.mkdir(parents=True, exist_ok=True)
        write_json(self.plan.out / SUITE_FILE, self.info)


async def execute(plan: SuitePlan, record: SuiteRecord, err: Console, progress: bool,
                  report: bool) -> list[RunOutcome]:
    """Every run of the suite; the outcomes in the suite's order."""
    outcomes: dict[PlannedRun, RunOutcome] = {}
    with ProgressBoard(err, enabled=progress) as board:
        async def lane(runs: tuple[PlannedRun, ...]) -> None:
            for run in runs:
                outcome = await _one(run, board, err, progress, report)
                outcomes[run] = outcome
                record.set(outcome)
                if outcome.status == "failed":
                    line(err, f"{run.label}: {outcome.message}", style="yellow")

        await asyncio.gather(*(lane(runs) for runs in plan.lanes.values()))
    return [outcomes[run] for run in plan.runs]


async def _one(run: PlannedRun, board: ProgressBoard, err: Console, progress: bool,
               report: bool) -> RunOutcome:
    quiet = terminal.console(file=io.StringIO())  # each run's own tables: in its report, not here
    output = Output(quiet, err, progress=progress, report=False, board=board,
                    label=run.label)
    directory = run.directory
    try:
        benchmark = await asyncio.to_thread(run.build)
        resume = (directory / RUN_FILE).is_file()
        if resume:
            info = RunStore.open(directory).info
            check_planned(run, info, benchmark)
            counts = info.counts
            if info.status == "finished" and not (counts is not None and counts.errors) \
                    and not _narrower(run, info):
                return RunOutcome(run, "done before", counts.records if counts else 0, 0,
                                  _stopped(info))
        elif benchmark.total() == 0:
            raise DataError(nothing_to_evaluate(benchmark))
        lock = RunLock(directory)
        try:
            result = await runs_execute.execute(
                run.spec, directory, output, lock, Continuing(resumed=False) if resume else None)
        finally:
            lock.release()
    except FAILURES as exc:
        return RunOutcome(run, "failed", message=str(exc) or type(exc).__name__)
    if report:
        await asyncio.to_thread(try_write_report, directory, run.definition())
    status = "finished with errors" if result.n_errors else "finished"
    return RunOutcome(run, status, result.n_records, result.n_errors,
                      _stopped(RunStore.open(directory).info))


def _narrower(run: PlannedRun, info: RunInfo) -> bool:
    """The suite file now asks a stopped run for a narrower interval: it goes on."""
    rule = info.stopping
    return rule is not None and rule.stopped and run.target_ci is not None and \
        run.target_ci < rule.target_ci


def _stopped(info: RunInfo) -> str:
    """How a run stopped by its target_ci ended, in a few words ("" for any other run)."""
    rule = info.stopping
    if rule is None or not rule.stopped or rule.ci is None:
        return ""
    return (f"stopped at its target interval: {rule.n} of {rule.samples} samples, 95% "
            f"interval {100 * (rule.ci[1] - rule.ci[0]):.1f} points wide")


def check_planned(run: PlannedRun, info: RunInfo, benchmark: Benchmark) -> None:
    """A run directory the suite finds already there must be this run's, else the suite
    file changed since: one line naming what differs (a new folder keeps both)."""
    recorded = info.backend
    differs = []
    if (recorded.kind, recorded.model) != (run.model.backend, run.model.model):
        differs.append(f"model {recorded.kind} {recorded.model} there, "
                       f"{run.model.backend} {run.model.model} in the suite")
    if info.generation.model_dump(exclude_unset=True) != run.settings.model_dump():
        differs.append("generation settings")
    planned = benchmark.options.model_dump()
    if info.options != planned:
        keys = sorted(k for k in set(planned) | set(info.options)
                      if info.options.get(k) != planned.get(k))
        differs.append(f"options {', '.join(keys)}")
    then = [v.name for v in info.variants or []]
    asked = [v.name for v in benchmark.variants] if isinstance(benchmark, Varied) else []
    if then != asked:
        differs.append(f"variants {', '.join(then) or 'none'} there, "
                       f"{', '.join(asked) or 'none'} in the suite")
    epochs = benchmark.epochs if isinstance(benchmark, Repeated) else 1
    if (info.epochs or 1) != epochs:
        differs.append(f"epochs {info.epochs or 1} there, {epochs} in the suite")
    if differs:
        raise ValueError(f"{run.directory} holds a run of other settings ({'; '.join(differs)})"
                         ": the suite file changed since it ran; give the suite another `out`"
                         " (or remove that folder) to run it anew")


def _planned(run: PlannedRun) -> dict[str, Any]:
    return {"label": run.label, "benchmark": run.benchmark, "model": run.model.label,
            "setting": dict(run.setting), "directory": str(run.directory),
            "status": "planned"}


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
