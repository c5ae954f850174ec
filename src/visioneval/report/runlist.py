"""Every run under a folder, one `RunEntry` each (`visioneval runs`, runs.html, the home page
of `visioneval view`): benchmark, model, status, main number with its interval, n and start.

Only run.json and metrics.json are read (never the journal): 1,000 runs are read in about
0.1 s (docs/PERFORMANCE.md). The main number is the run's benchmark definition's reading
(`BenchmarkDefinition.headline`), found by the trust rule (`registry.for_run` via
`rundir.shown_definition`): a run of a user's own benchmark shows the generic reading and
no code it names is imported. A directory that is not a readable run is one entry saying
what is wrong."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.headline import Headline
from visioneval.core.rundir import shown_definition
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import (
    METRICS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
    RunDirError,
    RunLock,
    RunStore,
)

REPORT_FILE = "report.html"  # report/page.py writes it
SHARDS = "shards"  # a distributed run keeps its shard runs here (distributed/ray_runner.py)


@dataclass(frozen=True)
class Status:
    """`kind` sorts and colours (finished, errors, stopped, interrupted, running, broken,
    other); `text` is what a reader sees."""

    kind: str
    text: str


@dataclass(frozen=True)
class RunEntry:
    directory: Path
    relative: str
    """The run's folder under the listed one ("." for the listed folder itself)."""
    status: Status
    started: str | None = None
    """When the run started (run.json, UTC, ISO 8601); else when its folder last changed."""
    benchmark: str = ""
    model: str = ""
    headline: Headline | None = None
    why: str = ""
    """Why there is no main number (or no interval), or what is wrong with the directory."""
    n: int | None = None
    report: bool = False
    """Whether the run's report.html exists."""

    @property
    def started_shown(self) -> str:
        """"2025-06-01 14:03" (UTC), or "-"."""
        return self.started[:16].replace("T", " ") if self.started else "-"


def find(root: Path) -> Iterator[Path]:
    """Every run directory under `root` (itself included): a folder with run.json or a
    journal. Symbolic links and hidden folders are not followed, and a run's own folders
    are not searched, but for its shard runs (`shards/`)."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as found:
                entries = list(found)
        except OSError:
            continue
        names = {e.name for e in entries}
        run = RUN_FILE in names or SAMPLES_FILE in names
        if run:
            yield folder
        stack.extend(Path(e.path) for e in sorted(entries, key=lambda e: e.name, reverse=True)
                     if not e.name.startswith(".") and (not run or e.name == SHARDS)
                     and _is_folder(e))


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def entries(root: Path, named: BenchmarkDefinition | None = None) -> list[RunEntry]:
    """Every run under `root`, newest first. `named`: the definition the user named
    (`--definition`), trusted for the runs of its benchmark."""
    found = [read(directory, root, named) for directory in find(root)]
    return sorted(found, key=lambda e: (e.started or "", e.relative), reverse=True)


def read(directory: Path, root: Path, named: BenchmarkDefinition | None = None) -> RunEntry:
    """One run directory as a row; never raises for what is in the directory."""
    relative = _relative(directory, root)
    if not (directory / RUN_FILE).is_file():
        return RunEntry(directory, relative, Status("broken", "broken"), _changed(directory),
                        why=f"no {RUN_FILE}: the run's description is missing",
                        report=_has_report(directory))
    try:
        store = RunStore.open(directory)
    except RunDirError as exc:
        return RunEntry(directory, relative, Status("broken", "broken"),
                        _changed(directory), why=_without(str(exc), directory),
                        report=_has_report(directory))
    info = store.info
    status = status_of(info, directory)
    headline, why = _headline(store, info, directory, status, named)
    n = headline.n if headline is not None and headline.n is not None else (
        info.counts.scored if info.counts is not None else None)
    return RunEntry(directory, relative, status, info.started_at or _changed(directory),
                    info.benchmark, info.backend.model, headline, why, n,
                    _has_report(directory))


def status_of(info: RunInfo, directory: Path) -> Status:
    """What became of the run: finished (with errors), stopped by --max-cost or
    --target-ci, interrupted, ended without finishing (killed), in use by a running process
    (its lock is held), or what run.json says."""
    recorded = info.status or ""
    errors = info.counts.errors if info.counts is not None else 0
    failed = f", {errors} error{'s' if errors != 1 else ''}" if errors else ""
    holder = RunLock.holder(directory)
    if holder is not None:
        doing = "merging" if recorded == "merging" else "running"
        return Status("running", f"{doing} (pid {holder})")
    if recorded in ("running", "merging"):
        return Status("interrupted", f"incomplete: its process ended{failed}")
    if recorded == "interrupted":
        return Status("interrupted", f"interrupted{failed}")
    if recorded == "stopped":
        return Status("stopped", f"stopped by --max-cost{failed}")
    if recorded == "partial":
        missing = len(info.missing_shards or [])
        return Status("interrupted", f"partial: {missing} shard{'s' if missing != 1 else ''} "
                                     f"missing{failed}")
    if recorded == "finished":
        stopping = info.stopping
        if stopping is not None and stopping.stopped:
            return Status("stopped", f"stopped by --target-ci at n={stopping.stopped_at}"
                                     f"{failed}")
        return Status("errors", f"finished{failed}") if errors else Status("finished",
                                                                           "finished")
    return Status("other", f"{recorded or 'no status'}{failed}")


def _headline(store: RunStore, info: RunInfo, directory: Path, status: Status,
              named: BenchmarkDefinition | None) -> tuple[Headline | None, str]:
    """The main number and, when it is missing or has no interval, why."""
    if not (directory / METRICS_FILE).exists():
        return None, ("no metrics yet" if status.kind == "running"
                      else f"no {METRICS_FILE}: no session ended")
    try:
        metrics = store.read_metrics()
    except RunDirError as exc:
        return None, _without(str(exc), directory)
    trusted = named if named is not None and named.name == info.benchmark else None
    try:
        definition, untrusted = shown_definition(info, trusted, directory)
    except ValueError as exc:
        return None, str(exc)
    try:
        headline = definition.headline(metrics)
    except Exception as exc:  # noqa: BLE001 - a file of any shape is one row, never a traceback
        return None, f"{METRICS_FILE} is not what {info.benchmark} writes ({_error(exc)})"
    if headline is None:
        return None, ("a benchmark of your own, read without its code: no main number"
                      if untrusted else f"{info.benchmark} names no main number")
    return headline, headline.why


def _error(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _without(message: str, directory: Path) -> str:
    """A store's one-line error without the directory it names (the row names it)."""
    inside = f"{directory}{os.sep}"
    return message[len(inside):] if message.startswith(inside) else message


def _has_report(directory: Path) -> bool:
    return (directory / REPORT_FILE).is_file()


def _relative(directory: Path, root: Path) -> str:
    try:
        return directory.relative_to(root).as_posix() or "."
    except ValueError:
        return str(directory)


def _changed(directory: Path) -> str | None:
    """When the folder last changed (UTC, ISO 8601), for a run.json that says nothing."""
    try:
        stamp = directory.stat().st_mtime
    except OSError:
        return None
    return dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat(timespec="seconds")


def as_dict(entry: RunEntry) -> dict[str, Any]:
    """An entry as plain values (tests and scripts)."""
    headline = entry.headline
    return {"run": entry.relative, "benchmark": entry.benchmark, "model": entry.model,
            "status": entry.status.text, "kind": entry.status.kind,
            "label": headline.label if headline else "",
            "value": headline.value_text if headline else "-",
            "interval": headline.interval_text if headline else "-",
            "n": entry.n, "started": entry.started, "why": entry.why}
