"""`visioneval merge`: shards of one run put back together as one run directory.

The merged directory is an ordinary run: its journal holds each shard's last record per
sample, and its metrics, tables and report are recomputed from that journal by the
benchmark, exactly as for a run done in one piece. Shards that do not belong together
(another benchmark, model, generation setting, option, dataset or shard count; a shard
missing or given twice; a sample in two shards) are refused with one line naming the
difference, before anything is written.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.engine.store import SAMPLES_FILE, RunDirError, RunStore, record_id
from visioneval.shards import Shard


class MergeRefused(ValueError):
    """The shards cannot be merged; the message says which ones and why (one line)."""


@dataclass(frozen=True)
class ShardRun:
    directory: Path
    info: dict[str, Any]
    shard: Shard


@dataclass(frozen=True)
class MergePlan:
    """Shards checked to belong together, in shard order, and the shards missing."""

    runs: list[ShardRun]
    count: int
    missing: list[int]


def open_shards(directories: Sequence[Path]) -> list[ShardRun]:
    runs = []
    for directory in directories:
        try:
            info = RunStore.open(directory).info
        except RunDirError as exc:
            raise MergeRefused(str(exc)) from None
        shard = Shard.from_info(info)
        if shard is None:
            raise MergeRefused(f"{directory} is not a shard (its run.json has no shard); "
                               "merge takes runs made with --shard K/N or --executor ray")
        runs.append(ShardRun(directory, info, shard))
    if not runs:
        raise MergeRefused("give the shard run directories to merge")
    return runs


def _located(info: dict[str, Any]) -> dict[str, Any]:
    """The options without the one that says where the data was read from (a path that may
    differ between machines: the dataset fingerprint says whether the data is the same)."""
    source = (info.get("dataset") or {}).get("source")
    return {k: v for k, v in (info.get("options") or {}).items()
            if source is None or v != source}


def _differences(a: ShardRun, b: ShardRun) -> str | None:
    """The first way in which two shards are not parts of one run, as words."""
    ia, ib = a.info, b.info
    if (ia.get("benchmark"), ia.get("definition")) != (ib.get("benchmark"), ib.get("definition")):
        return f"benchmark ({ia.get('benchmark')} vs {ib.get('benchmark')})"
    if a.shard.count != b.shard.count:
        return f"shard count ({a.shard.count} vs {b.shard.count})"
    ba, bb = ia.get("backend") or {}, ib.get("backend") or {}
    if (ba.get("kind"), ba.get("model")) != (bb.get("kind"), bb.get("model")):
        return (f"model ({ba.get('kind')} {ba.get('model')} vs "
                f"{bb.get('kind')} {bb.get('model')})")
    ga, gb = ia.get("generation") or {}, ib.get("generation") or {}
    for key in sorted(set(ga) | set(gb)):
        if ga.get(key) != gb.get(key):
            return f"generation setting {key} ({ga.get(key)!r} vs {gb.get(key)!r})"
    oa, ob = _located(ia), _located(ib)
    for key in sorted(set(oa) | set(ob)):
        if oa.get(key) != ob.get(key):
            return f"option {key} ({oa.get(key)!r} vs {ob.get(key)!r})"
    fa = (ia.get("dataset") or {}).get("fingerprint")
    fb = (ib.get("dataset") or {}).get("fingerprint")
    if fa != fb:
        return f"data fingerprint ({str(fa)[:12]} vs {str(fb)[:12]})"
    return None


def plan_merge(runs: list[ShardRun], allow_partial: bool) -> MergePlan:
    """Check that the shards are parts of one run; MergeRefused says the first problem."""
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
    if missing and not allow_partial:
        raise MergeRefused(f"shard{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(f'{k}/{count}' for k in missing)} "
                           f"{'are' if len(missing) > 1 else 'is'} missing; give "
                           f"{'their directories' if len(missing) > 1 else 'its directory'}"
                           ", or --allow-partial to merge what is there")
    return MergePlan([by_index[k] for k in sorted(by_index)], count, missing)


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
    """Every sample in the shard its id hashes to, so none can be in two shards (a shard of
    another partition, or a journal copied into the wrong folder, is refused)."""
    for run in plan.runs:
        for sample_id, _ in _latest_lines(run):
            if not run.shard.holds(sample_id):
                raise MergeRefused(f"{run.directory} (shard {run.shard.label}) holds sample "
                                   f"{sample_id!r}, which belongs to another shard: a sample "
                                   "would be counted twice")


def _merged_info(plan: MergePlan, out: Path) -> dict[str, Any]:
    first = plan.runs[0].info
    info = {k: v for k, v in first.items() if k not in ("shard", "sessions", "counts")}
    info["started_at"] = min(str(r.info.get("started_at", "")) for r in plan.runs)
    info["sessions"] = [session | {"shard": run.shard.index}
                        for run in plan.runs for session in run.info.get("sessions", [])]
    info["merged_from"] = [
        {"directory": _relative(run.directory, out), "shard": run.shard.as_dict(),
         "status": run.info.get("status"), "backend": run.info.get("backend"),
         "records": (run.info.get("counts") or {}).get("records")}
        for run in plan.runs]
    if plan.missing:
        info["missing_shards"] = [{"index": k, "count": plan.count} for k in plan.missing]
    return info


def _relative(path: Path, out: Path) -> str:
    try:
        return path.resolve().relative_to(out.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def merge(directories: Sequence[Path], out: Path, allow_partial: bool = False,
          replace: bool = False):
    """Check, then write the merged run in `out` (metrics, tables and run.json through the
    same `finish` as any run); returns the SessionResult. `replace`: an earlier merge in
    `out` is overwritten (a distributed run merges again after a resume)."""
    from visioneval.benchmarks import registry
    from visioneval.session import finish

    plan = plan_merge(open_shards(directories), allow_partial)
    resolved = out.resolve()
    if any(run.directory.resolve() == resolved for run in plan.runs):
        raise MergeRefused(f"--out {out} is one of the shards; choose another folder")
    if (out / SAMPLES_FILE).exists() and not replace:
        raise MergeRefused(f"{out} already holds a run; choose another --out")
    check_samples(plan)
    info = _merged_info(plan, out)
    benchmark = registry.build(info.get("definition") or info["benchmark"], info["options"])
    out.mkdir(parents=True, exist_ok=True)
    journal = out / SAMPLES_FILE
    partial = journal.with_name(f".{SAMPLES_FILE}.merging")
    with open(partial, "wb") as fh:
        for run in plan.runs:
            for _, line in _latest_lines(run):
                fh.write(line if line.endswith(b"\n") else line + b"\n")
    partial.replace(journal)
    store = RunStore(out, info)
    store.save_info()
    ended = [r.info.get("status") for r in plan.runs]
    status = "finished" if not plan.missing and all(s == "finished" for s in ended) \
        else "partial"
    result = finish(benchmark, store, status, _stats(plan))
    store.info["merged_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    store.save_info()
    return result, benchmark, plan


def _stats(plan: MergePlan):
    """This merge's counters for the closing line: the shards' last sessions added up."""
    from visioneval.engine.runner import RunStats

    stats = RunStats()
    for run in plan.runs:
        sessions = run.info.get("sessions") or []
        for session in sessions:
            stats.cache_hits += session.get("cache_hits", 0)
            stats.sent += session.get("sent", 0)
        if sessions:
            stats.skipped += sessions[-1].get("skipped", 0)
    return stats
