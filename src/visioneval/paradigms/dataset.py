"""A paradigm's constant-stimuli dataset: one parquet file per condition
(`<out>/<condition>/shard_00000.parquet`), in the synth writers' style: the image as an HF
{bytes, path} struct, the question, the right answer, a deterministic id and the trial's
fields as columns (its geometry as JSON text). The same seed gives the same bytes; the
levels' trials are interleaved so a run cut short (`--samples N`) has every level."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from visioneval.paradigms.paradigm import Condition, Design, Drawn, Paradigm
from visioneval.paradigms.trial import stimulus_seed
from visioneval.workers import pool

ROW_GROUP = 64
PARALLEL_FROM = 400  # stimuli; below this, starting worker processes costs more than it saves
TRIAL_COLUMNS = ("paradigm", "condition", "kind", "level", "unit", "options", "positive",
                 "seed", "width", "height", "stimulus")
COLUMNS = ("id", "image", "question", "answer", *TRIAL_COLUMNS)

SCHEMA = pa.schema([
    ("id", pa.string()),
    ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
    ("question", pa.string()), ("answer", pa.string()),
    ("paradigm", pa.string()), ("condition", pa.string()), ("kind", pa.string()),
    ("level", pa.float64()), ("unit", pa.string()), ("options", pa.list_(pa.string())),
    ("positive", pa.string()), ("seed", pa.int64()), ("width", pa.int64()),
    ("height", pa.int64()), ("stimulus", pa.string())])


def chosen(paradigm: Paradigm, design: Design) -> list[Condition]:
    """The design's conditions; ValueError naming an unknown one."""
    every = paradigm.conditions()
    if not design.conditions:
        return list(every)
    known = {c.name: c for c in every}
    unknown = [c for c in design.conditions if c not in known]
    if unknown:
        raise ValueError(f"{paradigm.name} has no condition {', '.join(unknown)} (it has "
                         f"{', '.join(known)})")
    return [known[c] for c in design.conditions]


def planned(paradigm: Paradigm, design: Design, seed: int
            ) -> Iterator[tuple[str, Condition, float, int, int]]:
    """(id, condition, level, index, stimulus seed) of every stimulus, in file order: trial
    by trial, every level at each."""
    for c, condition in enumerate(chosen(paradigm, design)):
        trials = design.trials or condition.trials
        for t in range(trials):
            for li, level in enumerate(condition.levels):
                yield (f"{paradigm.name}-{condition.name}-{level:g}-{t}", condition, level, t,
                       stimulus_seed(seed, c, li, t))


def _draw(job: tuple[Paradigm, Condition, float, int, int]) -> Drawn:
    paradigm, condition, level, index, seed = job
    return paradigm.draw(condition, level, index, seed)


def drawn(paradigm: Paradigm, jobs: list[tuple[Condition, float, int, int]]) -> Iterator[Drawn]:
    """The stimuli in order; by one worker process per core for a large design."""
    work = [(paradigm, *job) for job in jobs]
    workers = min(os.cpu_count() or 1, 8)
    if len(work) < PARALLEL_FROM or workers < 2:
        return map(_draw, work)
    with pool(workers, "stimuli") as drawing:
        return iter(list(drawing.map(_draw, work, chunksize=16)))


def row(ident: str, made: Drawn) -> dict[str, Any]:
    t = made.trial
    return {"id": ident, "image": {"bytes": made.png, "path": f"{ident}.png"},
            "question": made.question, "answer": t.answer, "paradigm": t.paradigm,
            "condition": t.condition, "kind": t.kind, "level": t.level, "unit": t.unit,
            "options": list(t.options), "positive": t.positive, "seed": t.seed,
            "width": t.width, "height": t.height,
            "stimulus": json.dumps(t.stimulus, sort_keys=True)}


def write_dataset(paradigm: Paradigm, out: Path, design: Design | None = None,
                  seed: int = 0) -> dict[str, int]:
    """Write one parquet file per condition; returns rows per condition."""
    design = design or Design()
    plan = list(planned(paradigm, design, seed))
    rows: dict[str, list[dict[str, Any]]] = {}
    for (ident, condition, *_), made in zip(plan, drawn(paradigm, [p[1:] for p in plan]),
                                             strict=True):
        rows.setdefault(condition.name, []).append(row(ident, made))
    for name, found in rows.items():
        folder = Path(out) / name
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(found, schema=SCHEMA),
                       folder / "shard_00000.parquet", row_group_size=ROW_GROUP)
    return {name: len(r) for name, r in rows.items()}
