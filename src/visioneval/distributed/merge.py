"""`visioneval merge`: shards of one run put back together as one run directory.

The merged directory is an ordinary run: its journal holds each shard's last record per
sample, and its metrics, tables and report are recomputed from that journal by the
benchmark, exactly as for a run done in one piece. Shards that do not belong together
(another benchmark, model, generation setting, option, dataset or shard count; a shard
missing, given twice or still running; a sample in two shards) are refused with one line
naming the difference, before anything is written.

run.json is written first with status "merging" and last with the final status, after the
journal, metrics.json and the tables: a merge killed halfway leaves a run that says it is
unfinished, and the same merge command completes it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval.core import registry
from visioneval.core.epoch_ids import first_answer_id
from visioneval.core.runfiles import MergedShard, MissingShard, RunInfo
from visioneval.core.store import (
    LOCK_FILE,
    SAMPLES_FILE,
    RunDirError,
    RunLock,
    RunStore,
    record_id,
)
from visioneval.core.variant_ids import original_id
from visioneval.engine.runner import RunStats
from visioneval.epochs.family import rebuilt
from visioneval.runs.session import finish
from visioneval.shards import Shard

MERGING = "merging"
"""run.json's status while a merge writes the directory (the final one is written last)."""


class MergeRefused(ValueError):
    """The shards cannot be merged; the message says which ones and why (one line)."""


@dataclass(frozen=True)
class ShardRun:
    directory: Path
    info: RunInfo
    shard: Shard


@dataclass(frozen=True)
class MergePlan:
    """Shards checked to belong together, in shard order, and the shards missing (`running`:
    those of them given but left out because they were still running)."""

    runs: list[ShardRun]
    count: int
    missing: list[int]
    running: list[int] = field(default_factory=list)


def lock_holder(directory: Path) -> str | None:
    """The pid holding a run directory's lock (`engine.store.RunLock`: the run is still
    going), or None. The lock is only probed (a shared flock, dropped at once); a missing
    .lock file is not created."""
    try:
        fd = os.open(directory / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None  # never locked (or not readable: nothing says it is running)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
    finally:
        os.close(fd)  # drops the probe's shared lock
    return None


def open_shards(directories: Sequence[Path]) -> list[ShardRun]:
    runs = []
    for directory in directories:
        try:
            info = RunStore.open(directory).info
        except RunDirError as exc:
            raise MergeRefused(str(exc)) from None
        shard = info.shard
        if shard is None:
            raise MergeRefused(f"{directory} is not a shard (its run.json has no shard); "
                               "merge takes runs made with --shard K/N or --executor ray")
        runs.append(ShardRun(directory, info, shard))
    if not runs:
        raise MergeRefused("give the shard run directories to merge")
    return runs


def _located(info: RunInfo) -> dict[str, Any]:
    """The options without the one that says where the data was read from (a path that may
    differ between machines: the dataset fingerprint says whether the data is the same)."""
    source = info.dataset.source
    return {k: v for k, v in info.options.items() if source is None or v != source}


def _differences(a: ShardRun, b: ShardRun) -> str | None:
    """The first way in which two shards are not parts of one run, as words."""
    ia, ib = a.info, b.info
    if (ia.benchmark, ia.definition) != (ib.benchmark, ib.definition):
        return f"benchmark ({ia.benchmark} vs {ib.benchmark})"
    if a.shard.count != b.shard.count:
        return f"shard count ({a.shard.count} vs {b.shard.count})"
    ba, bb = ia.backend, ib.backend
    people = ba.kind == bb.kind == "human"  # a panel: each shard a person of its own
    if (ba.kind, ba.model) != (bb.kind, bb.model) and not people:
        return f"model ({ba.kind} {ba.model} vs {bb.kind} {bb.model})"
    ga = ia.generation.model_dump(exclude_unset=True)
    gb = ib.generation.model_dump(exclude_unset=True)
    for key in sorted(set(ga) | set(gb)):
        if ga.get(key) != gb.get(key):
            return f"generation setting {key} ({ga.get(key)!r} vs {gb.get(key)!r})"
    oa, ob = _located(ia), _located(ib)
    for key in sorted(set(oa) | set(ob)):
        if oa.get(key) != ob.get(key):
            return f"option {key} ({oa.get(key)!r} vs {ob.get(key)!r})"
    fa, fb = ia.dataset.fingerprint, ib.dataset.fingerprint
    if fa != fb:
        return f"data fingerprint ({str(fa)[:12]} vs {str(fb)[:12]})"
    return None


def plan_merge(runs: list[ShardRun], allow_partial: bool) -> MergePlan:
    """Check that the shards are parts of one run; MergeRefused says the first problem. A
    shard still running is refused, or (`allow_partial`) left out as missing."""
    running = []
    for run in runs:
        holder = lock_holder(run.directory)
        if holder is None:
            continue
        if not allow_partial:
            raise MergeRefused(f"shard {run.shard.label} ({run.directory}) is still running "
                               f"(pid {holder} holds its {LOCK_FILE}); merge once it has "
                               "finished, or pass --allow-partial to leave it out")
        running.append(run)
    runs = [run for run in runs if run not in running]
    if not runs:
        raise MergeRefused("every shard given is still running; merge once one has finished")
    first = runs[0]
    for other in runs[1:]:
        why = _differences(first, other)
        if why is not None:
            raise MergeRefused(f"{first.directory} and {other.directory} are not shards of one "
                               f"run: they differ in {why}")
    by_index: dict[int, ShardRun] = {}
    for run in runs:
        if run.shard.index in by_index:
            raise MergeRefused(f"shard {run.shard.label} is given twice: "
                               f"{by_index[run.shard.index].directory} and {run.directory}")
        by_index[run.shard.index] = run
    count = first.shard.count
    missing = [k for k in range(1, count + 1) if k not in by_index]
    left_out = sorted({run.shard.index for run in running} - set(by_index))
    if missing and not allow_partial:
        raise MergeRefused(f"shard{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(f'{k}/{count}' for k in missing)} "
                           f"{'are' if len(missing) > 1 else 'is'} missing; give "
                           f"{'their directories' if len(missing) > 1 else 'its directory'}"
                           ", or --allow-partial to merge what is there")
    return MergePlan([by_index[k] for k in sorted(by_index)], count, missing, left_out)


def _latest_lines(run: ShardRun) -> Iterator[tuple[str, bytes]]:
    """(sample id, journal line) of each sample's last record in a shard, streamed."""
    store = RunStore(run.directory, run.info)
    wanted = store.latest_lines()
    for number, line in store.iter_lines():
        if number < len(wanted) and wanted[number]:
            sample_id = record_id(line)
            if sample_id is None:  # not our writer's layout: parse the record for its id
                record = store._parse(number, line)
                if record is None:
                    continue
                sample_id = record.id
            yield sample_id, line


def check_samples(plan: MergePlan) -> None:
    """Every sample in the shard its id (a variant's or a repeated answer's: its original's)
    hashes to, so none can be in two shards (a shard of another partition, or a journal
    copied into the wrong folder, is refused)."""
    for run in plan.runs:
        variants = [v.name for v in run.info.variants or []]
        epochs = run.info.epochs or 1
        for sample_id, _ in _latest_lines(run):
            # A variant's sample is in its original's shard (`session.shard_key`).
            item = first_answer_id(sample_id, epochs)
            if not run.shard.holds(original_id(item, variants)):
                raise MergeRefused(f"{run.directory} (shard {run.shard.label}) holds sample "
                                   f"{sample_id!r}, which belongs to another shard: a sample "
                                   "would be counted twice")


def _merged_info(plan: MergePlan, out: Path) -> RunInfo:
    """The first shard's run.json as the merged run's: every shard's sessions (each saying
    its shard), where it was merged from, and status "merging" until the merge ends."""
    info = plan.runs[0].info.model_copy(deep=True)
    for name in ("shard", "sessions", "counts", "not_in_data"):
        info.forget(name)
    # Records of samples not in the data, found by each shard, stay out of the merged run.
    outside = sorted({i for r in plan.runs for i in r.info.not_in_data or []})
    if outside:
        info.not_in_data = outside
    info.started_at = min(r.info.started_at or "" for r in plan.runs)
    info.sessions = [session.model_copy(update={"shard": run.shard.index})
                     for run in plan.runs for session in run.info.sessions]
    info.merged_from = [
        MergedShard(directory=_relative(run.directory, out), shard=run.shard,
                    status=run.info.status, backend=run.info.backend,
                    records=run.info.counts.records if run.info.counts is not None and
                    "records" in run.info.counts.model_fields_set else None)
        for run in plan.runs]
    if plan.missing:
        info.missing_shards = [MissingShard(index=k, count=plan.count, still_running=True)
                               if k in plan.running else MissingShard(index=k, count=plan.count)
                               for k in plan.missing]
    observers = sorted({r.info.backend.model for r in plan.runs})
    if info.backend.kind == "human" and len(observers) > 1:  # each answer keeps its own id
        info.backend = info.backend.model_copy(update={"model": "+".join(observers)})
    info.status = MERGING
    return info


def _relative(path: Path, out: Path) -> str:
    try:
        return path.resolve().relative_to(out.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def merge(directories: Sequence[Path], out: Path, allow_partial: bool = False,
          replace: bool = False, definition: str | None = None):
    """Check, then write the merged run in `out` (metrics, tables and run.json through the
    same `finish` as any run); returns the SessionResult. `replace`: an earlier merge in
    `out` is overwritten (a distributed run merges again after a resume); a merge that
    stopped halfway in `out` is always completed. `definition`: the definition the user
    named for shards of their own benchmark (`--definition`), which merging needs to
    recompute the metrics (`registry.build_for_run`: a run names no code to import)."""
    plan = plan_merge(open_shards(directories), allow_partial)
    resolved = out.resolve()
    if any(run.directory.resolve() == resolved for run in plan.runs):
        raise MergeRefused(f"--out {out} is one of the shards; choose another folder")
    if (out / SAMPLES_FILE).exists() and not replace and not unfinished_merge(out):
        raise MergeRefused(f"{out} already holds a run; choose another --out")
    check_samples(plan)
    info = _merged_info(plan, out)
    first = plan.runs[0]
    benchmark = registry.build_for_run(
        first.info, definition, first.directory, to_read=True,
        instead="merging cannot recompute the metrics with its benchmark's code")
    benchmark = rebuilt(benchmark, first.info, registry.for_run(first.info, definition))
    if definition in registry.names():  # run.json names the code behind the numbers
        info.forget("definition")
    elif definition is not None:
        info.definition = registry.portable(definition)
    with RunLock(out):  # one merge at a time into `out`
        store = RunStore(out, info)
        store.save_info()  # status "merging": until the end, the directory says it is unfinished
        journal = out / SAMPLES_FILE
        partial = journal.with_name(f".{SAMPLES_FILE}.merging")
        with open(partial, "wb") as fh:
            for run in plan.runs:
                for _, line in _latest_lines(run):
                    fh.write(line if line.endswith(b"\n") else line + b"\n")
        partial.replace(journal)
        ended = [r.info.status for r in plan.runs]
        status = "finished" if not plan.missing and all(s == "finished" for s in ended) \
            else "partial"
        store.info.merged_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        result = finish(benchmark, store, status, _stats(plan))  # run.json last
    return result, benchmark, plan


def unfinished_merge(out: Path) -> bool:
    """Whether `out` holds a merge that stopped before its end (killed, or the machine went
    down): run.json still says "merging", or a merged run has no metrics.json (a merge
    from before the status was written last). The same merge completes it."""
    try:
        info = RunStore.open(out).info
    except RunDirError:
        return False
    if info.merged_from is None:
        return False
    return info.status == MERGING or not (out / "metrics.json").exists()


def _stats(plan: MergePlan):
    """This merge's counters for the closing line: the shards' last sessions added up."""
    stats = RunStats()
    for run in plan.runs:
        sessions = run.info.sessions
        for session in sessions:
            stats.cache_hits += session.cache_hits
            stats.sent += session.sent
        if sessions:
            stats.skipped += sessions[-1].skipped
    return stats
