"""`visioneval rescore`: another tool's logs in, a visioneval run directory out, no request
sent. Logs are matched to the benchmark whose reader knows their task (`capabilities.
ReadsForeignLogs`), every answer is scored by the benchmark's own `score` and journalled the
moment it is read, and the run is finished as every run is (`session.finish`: metrics.json,
tables, counts). run.json says where the answers came from (`rescored_from`) and that no
model was asked (`backend.kind` "rescored")."""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.core import registry
from visioneval.core.capabilities import ReadsForeignLogs
from visioneval.core.foreign import Answered, ForeignReader, LogFile, RescoreRequest, Source
from visioneval.core.records import Record, SkippedRow, stable_hash
from visioneval.core.runfiles import (
    RUN_FORMAT,
    DatasetInfo,
    LogFileInfo,
    RescoredFrom,
    RunInfo,
    SessionInfo,
)
from visioneval.core.store import SAMPLES_FILE, RunDirError, RunLock, RunStore
from visioneval.core.version import installed_version
from visioneval.engine.runner import RunStats
from visioneval.foreign import lmms_eval, vlmevalkit
from visioneval.io.lines import BadLines
from visioneval.runs.session import SessionResult, default_run_dir, finish

log = logging.getLogger(__name__)

FINDERS: dict[str, Callable[[Iterable[Path], Collection[str]], list[LogFile]]] = {
    lmms_eval.TOOL: lambda paths, tasks: lmms_eval.find_logs(paths),
    vlmevalkit.TOOL: vlmevalkit.find_logs,
}
"""Each tool visioneval reads, and how its per-sample files are found and named by task
(given the tasks visioneval's readers know: VLMEvalKit's file names need them)."""


ANSWERS = {lmms_eval.TOOL: "resps (the model's raw response) where the line keeps it, else "
                           "filtered_resps (lmms-eval drops resps when the two are equal); "
                           "a differing filtered_resps is kept in the record's metadata",
           vlmevalkit.TOOL: "prediction (the model's answer as VLMEvalKit saved it; its "
                            "failure answer \"Failed to obtain answer...\" is an error)"}
"""Which of a tool's logged responses is scored, in words (run.json's provenance)."""


def tools() -> list[str]:
    return list(FINDERS)


@dataclass(frozen=True)
class Rescored:
    """A finished re-scoring: the run, the source's notes and the bad lines."""

    result: SessionResult
    notes: list[str]
    bad_lines: int
    benchmark: str


def readers(tool: str) -> dict[str, ForeignReader]:
    """The registered benchmarks that read `tool`'s logs, by benchmark name."""
    found = {}
    for name in registry.names():
        definition = registry.definition(name)
        if not isinstance(definition, ReadsForeignLogs):
            continue
        reader = definition.foreign_logs().get(tool)
        if reader is not None:
            found[name] = reader
    return found


def assign(tool: str, logs: Sequence[LogFile], only: str | None
           ) -> tuple[str, ForeignReader, list[LogFile], list[LogFile]]:
    """(benchmark, its reader, its logs, logs of other benchmarks left out). A task no
    benchmark reads is one error naming the tasks that are read; logs of several benchmarks
    need `only` (--benchmark) to pick one."""
    known = readers(tool)
    if only is not None and only not in known:
        raise ValueError(f"--benchmark {only}: no {tool} reader; benchmarks with one: "
                         f"{', '.join(known) or '(none)'}")
    owner = {task: name for name, reader in known.items() for task in reader.tasks()}
    by_benchmark: dict[str, list[LogFile]] = {}
    for log_file in logs:
        name = owner.get(log_file.task)
        if name is None:
            raise ValueError(_unknown_task(tool, log_file, known))
        by_benchmark.setdefault(name, []).append(log_file)
    _refuse_repeated_tasks(logs)
    if only is None and len(by_benchmark) > 1:
        counts = "; ".join(f"{n}: {len(fs)} files" for n, fs in by_benchmark.items())
        raise ValueError(f"these logs are of {len(by_benchmark)} benchmarks ({counts}); a run "
                         "directory holds one: pass --benchmark "
                         + " or --benchmark ".join(by_benchmark))
    name = only or next(iter(by_benchmark))
    if name not in by_benchmark:
        raise ValueError(f"--benchmark {name}: none of these logs is of {name} (their tasks: "
                         f"{', '.join(sorted({f.task for f in logs}))})")
    left_out = [f for n, fs in by_benchmark.items() if n != name for f in fs]
    return name, known[name], by_benchmark[name], left_out


def _unknown_task(tool: str, log_file: LogFile, known: dict[str, ForeignReader]) -> str:
    for reader in known.values():
        why = reader.other_benchmark(log_file.task)
        if why:
            return f"{log_file.path}: {tool} task '{log_file.task}' is {why}"
    listing = "; ".join(f"{name}: {', '.join(reader.tasks())}" for name, reader in known.items())
    return (f"{log_file.path}: {tool} task '{log_file.task}' is not one visioneval re-scores; "
            f"the tasks it reads are {listing}")


def _refuse_repeated_tasks(logs: Sequence[LogFile]) -> None:
    """Two files of one task are two runs (their samples would overwrite each other)."""
    by_task: dict[str, list[Path]] = {}
    for log_file in logs:
        by_task.setdefault(log_file.task, []).append(log_file.path)
    repeated = {t: ps for t, ps in by_task.items() if len(ps) > 1}
    if repeated:
        raise ValueError("several logs of one task (" + "; ".join(
            f"{t}: {', '.join(p.name for p in ps)}" for t, ps in repeated.items())
            + "); they are different runs: re-score one at a time")


def rescore(tool: str, paths: Sequence[Path], out: Path | None, request: RescoreRequest,
            only: str | None = None, on_left_out: Callable[[str], None] = print) -> Rescored:
    """Read the logs at `paths`, write the run directory `out` (default: results/
    <benchmark>-rescored-<model>-<time>) and finish it."""
    if tool not in FINDERS:
        raise ValueError(f"--from {tool}: visioneval reads {', '.join(FINDERS)}")
    known = [task for reader in readers(tool).values() for task in reader.tasks()]
    logs = FINDERS[tool](paths, known)
    name, reader, mine, left_out = assign(tool, logs, only)
    for log_file in left_out:
        on_left_out(f"left out {log_file.path} ({log_file.task}: not {name})")
    bad = BadLines()
    source = reader.read(mine, request, bad)
    directory = out or default_run_dir(f"{name}-rescored", source.model)
    if (directory / SAMPLES_FILE).exists():
        raise RunDirError(f"{directory} already holds a run; choose another --out (a rescore "
                          "writes a new run)")
    with RunLock(directory):
        store = RunStore.create(directory, run_info(name, tool, source, mine))
        return _write(name, tool, source, mine, store, bad)


def run_info(name: str, tool: str, source: Source, logs: Sequence[LogFile]) -> RunInfo:
    """run.json before the answers are read (the dataset fingerprint and the provenance's
    counts are filled in at the end)."""
    return RunInfo.model_validate({
        "run_format": RUN_FORMAT,
        "visioneval_version": installed_version(),
        "benchmark": name,
        "definition": source.definition,
        "options": source.options,
        "dataset": source.dataset,
        "backend": {"kind": "rescored", "model": source.model, "tool": tool},
        "generation": source.generation,
        "python": sys.version.split()[0],
        "started_at": _now(),
        "status": "running",
        "sessions": [],
        "rescored_from": {"tool": tool, **source.tool_run, "requests_sent": 0,
                          "answers": ANSWERS.get(tool, ""),
                          "files": [{"path": str(f.path.resolve()), "task": f.task}
                                    for f in logs]},
    })


def _write(name: str, tool: str, source: Source, logs: Sequence[LogFile], store: RunStore,
           bad: BadLines) -> Rescored:
    stats = RunStats()
    started, cpu_started = time.perf_counter(), time.process_time()
    per_group: Counter[str] = Counter()
    session = SessionInfo(started_at=_now(), host=os.uname().nodename, pid=os.getpid(),
                          rescored_from=tool)
    try:
        for item in source.items:
            if isinstance(item, SkippedRow):
                log.warning(item.line())
                stats.skipped += 1
                stats.skipped_rows.append({"group": item.group, "row": item.row,
                                           "reason": item.reason})
                continue
            store.append(_record(source, item, stats))
            per_group[item.sample.group] += 1
    finally:
        store.close()
    session.update({"ended_at": _now(), "seconds": round(time.perf_counter() - started, 3),
                    "cpu_seconds": round(time.process_time() - cpu_started, 3),
                    "status": "finished", **stats.as_dict()})
    store.info.sessions.append(session)
    files = [_file_block(f, bad) for f in logs]
    recorded = store.info.rescored_from
    assert recorded is not None  # run_info wrote it
    store.info.rescored_from = RescoredFrom.model_validate(
        recorded.model_dump(exclude_unset=True) | {"files": files, "bad_lines": bad.total}
        | source.checks())
    store.info.dataset = _dataset(source.dataset, files, per_group)
    result = finish(source.benchmark, store, "finished", stats)
    return Rescored(result, source.notes(), bad.total, name)


def _record(source: Source, item: Answered, stats: RunStats) -> Record:
    """The record visioneval's own run would have journalled for this answer."""
    sample, response = item.sample, item.response
    record = Record.model_construct(id=sample.id, group=sample.group, target=sample.target,
                                    response=response, metadata=sample.metadata,
                                    prompt=sample.prompt_summary(), parsed={}, scores={})
    if response.ok:
        record.parsed, record.scores = source.benchmark.score(sample, response.text or "")
    else:
        stats.errors += 1
        stats.count_error(response.error or "no answer")
    stats.finished += 1
    stats.prompt_tokens += response.prompt_tokens or 0
    stats.completion_tokens += response.completion_tokens or 0
    return record


def _file_block(log_file: LogFile, bad: BadLines) -> LogFileInfo:
    tally = bad.tally(log_file.path)
    return LogFileInfo(path=str(log_file.path.resolve()), task=log_file.task,
                       lines=tally.lines, bad_lines=tally.bad, sha256=tally.sha256)


def _dataset(block: dict[str, Any], files: list[LogFileInfo],
             per_group: Counter[str]) -> DatasetInfo:
    """The dataset block: the reader's, its fingerprint extended by the logs' content (two
    re-scorings of the same logs and data have the same one) and the records per part."""
    return DatasetInfo.model_validate(
        block | {"fingerprint": stable_hash([block.get("fingerprint"),
                                             sorted(f.sha256 or "" for f in files)]),
                 "rows": dict(per_group)})


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
