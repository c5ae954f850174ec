"""The psychophysics dataset: experiments x levels x set sizes x trials as parquet, one file
per experiment (`<out>/<experiment>/shard_00000.parquet`), in the synth writers' style: the
image as an HF {bytes, path} struct, the question and answer, a deterministic id, and the
stimulus parameters (`StimulusParams`) as columns. The same seed gives the same bytes."""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from visioneval.benchmarks.psychophysics import prompts
from visioneval.benchmarks.psychophysics.params import (
    CHOICE_EXPERIMENTS,
    CONJUNCTION,
    FEATURES,
    POOL_FOLDER,
    Experiment,
    Feature,
    StimulusParams,
)
from visioneval.benchmarks.psychophysics.stimuli import Stimulus, Trial, make_stimulus
from visioneval.workers import pool

EXPERIMENTS: tuple[Experiment, ...] = ("detection", "presence", "conjunction", "setsize",
                                       "heterogeneity")
ROW_GROUP = 64
POOL_SEED = 100  # keeps the pool's stimulus seeds apart from the experiments'


def _log_levels(low: float, high: float, n: int = 8) -> tuple[float, ...]:
    return tuple(float(f"{v:.3g}") for v in np.geomspace(low, high, n))


DEFAULT_LEVELS: dict[str, tuple[float, ...]] = {
    "orientation": _log_levels(0.5, 45.0),  # degrees
    "color": _log_levels(0.5, 30.0),  # CIEDE2000
    "size": _log_levels(0.02, 1.0),  # |ln(target area / distractor area)|
    CONJUNCTION: (20.0,),  # the colour difference; orientation differs by CONJUNCTION_DEG
}
DEFAULT_POOL_LEVELS: dict[str, tuple[float, ...]] = {
    "orientation": _log_levels(0.5, 45.0, 24),
    "color": _log_levels(0.5, 30.0, 24),
    "size": _log_levels(0.02, 1.0, 24),
}
"""The adaptive method's pool (`--method adaptive`): the detection question at 24 levels per
feature over the same ranges, from which each adaptive trial takes an unused stimulus."""
SET_SIZE_LEVELS: dict[str, float] = {"orientation": 23.7, "color": 16.7, "size": 0.572}
"""The set-size experiment's one difference per feature: the default levels' seventh step,
well above the simulated observer's and the popout baseline's thresholds, so accuracy
there measures crowding by distractors rather than the difference itself."""
SET_SIZES = (4, 8, 16, 32, 64)
SPREADS: dict[str, tuple[float, ...]] = {"orientation": (4.0, 8.0, 16.0),
                                         "color": (2.0, 4.0, 8.0), "size": (0.05, 0.1, 0.2)}
"""The heterogeneity experiment's distractor jitter per feature (uniform within ±spread, in
the feature's unit): the yes/no presence question again as distractors vary more (Duncan &
Humphreys 1989: search gets harder as distractors differ from each other). Yes/no, not the
three-way question: with jittered distractors "which feature differs" is answered by the
jitter itself, target or not."""


@dataclass(frozen=True)
class Design:
    """What to write. Presence and conjunction arrays alternate target present / absent
    (trial parity); an absent array keeps its condition's feature and level. `spread`: the
    distractors' jitter per feature, in the feature's unit (none by default)."""

    experiments: tuple[Experiment, ...] = EXPERIMENTS
    levels: Mapping[str, tuple[float, ...]] = field(default_factory=lambda: DEFAULT_LEVELS)
    set_sizes: tuple[int, ...] = (16,)
    trials: int = 20
    # The set-size experiment: the detection question at one level per feature, the number
    # of items growing (Treisman & Gelade 1980: a feature target's accuracy stays flat).
    setsize_levels: Mapping[str, float] = field(default_factory=lambda: SET_SIZE_LEVELS)
    setsize_sizes: tuple[int, ...] = SET_SIZES
    spread: Mapping[str, float] = field(default_factory=dict)
    heterogeneity_spreads: Mapping[str, tuple[float, ...]] = field(
        default_factory=lambda: SPREADS)
    heterogeneity_trials: int | None = None  # per level and spread; None: `trials`
    # Written with the detection experiment, into POOL_FOLDER; {} leaves it out.
    pool_levels: Mapping[str, tuple[float, ...]] = field(
        default_factory=lambda: DEFAULT_POOL_LEVELS)
    pool_trials: int | None = None  # per pool level; None: `trials`


def _stimulus_seed(seed: int, *where: int) -> int:
    return int(np.random.SeedSequence([seed, *where]).generate_state(1, np.uint64)[0] >> 1)


def trials(design: Design, seed: int) -> Iterator[tuple[str, Trial]]:
    """(id, trial) of every stimulus, in file order."""
    for e, experiment in enumerate(design.experiments):
        if experiment == "heterogeneity":
            yield from heterogeneity_trials(design, seed)
            continue
        features: tuple[Feature, ...] = (
            (CONJUNCTION,) if experiment == "conjunction" else FEATURES)
        for f, feature in enumerate(features):
            setsize = experiment == "setsize"
            levels = (design.setsize_levels[feature],) if setsize else design.levels[feature]
            for li, level in enumerate(levels):
                for set_size in design.setsize_sizes if setsize else design.set_sizes:
                    for t in range(design.trials):
                        present = experiment in CHOICE_EXPERIMENTS or t % 2 == 0
                        ident = (f"{experiment}-{feature}-{level:g}-n{set_size}-"
                                 f"{'' if present else 'absent-'}{t}")
                        yield ident, Trial(experiment, feature, level, set_size, present,
                                           design.spread.get(feature, 0.0),
                                           _stimulus_seed(seed, e, f, li, set_size, t))


def heterogeneity_trials(design: Design, seed: int) -> Iterator[tuple[str, Trial]]:
    """(id, trial) of the heterogeneity experiment: presence arrays (target present and
    absent alternating) at every second level of the feature, at each spread."""
    if "heterogeneity" not in design.experiments:
        return
    e = design.experiments.index("heterogeneity")
    n = design.trials if design.heterogeneity_trials is None else design.heterogeneity_trials
    for f, feature in enumerate(FEATURES):
        for si, spread in enumerate(design.heterogeneity_spreads.get(feature, ())):
            for li, level in enumerate(design.levels[feature][1::2]):
                for set_size in design.set_sizes:
                    for t in range(n):
                        present = t % 2 == 0
                        yield (f"heterogeneity-{feature}-{level:g}-s{spread:g}-n{set_size}-"
                               f"{'' if present else 'absent-'}{t}",
                               Trial("heterogeneity", feature, level, set_size, present,
                                     spread, _stimulus_seed(seed, e, f, li, set_size, t, si)))


def pool_trials(design: Design, seed: int) -> Iterator[tuple[str, Trial]]:
    """(id, trial) of the adaptive pool's stimuli: detection arrays at the pool's levels."""
    if "detection" not in design.experiments:
        return
    n = design.trials if design.pool_trials is None else design.pool_trials
    for f, feature in enumerate(FEATURES):
        for li, level in enumerate(design.pool_levels.get(feature, ())):
            for set_size in design.set_sizes:
                for t in range(n):
                    yield (f"pool-{feature}-{level:g}-n{set_size}-{t}",
                           Trial("detection", feature, level, set_size, True,
                                 design.spread.get(feature, 0.0),
                                 _stimulus_seed(seed, POOL_SEED, f, li, set_size, t)))


def _arrow_type(annotation: Any) -> pa.DataType:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return _arrow_type(next(a for a in args if a is not type(None)))
    if origin is Literal or annotation is str:
        return pa.string()
    if origin is tuple:
        return pa.list_(pa.float64())
    return {bool: pa.bool_(), int: pa.int64(), float: pa.float64()}[annotation]


def arrow_schema() -> pa.Schema:
    """The dataset's columns: id, image, question, answer, then StimulusParams' fields."""
    params = [(name, _arrow_type(f.annotation))
              for name, f in StimulusParams.model_fields.items()]
    return pa.schema([("id", pa.string()),
                      ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                      ("question", pa.string()), ("answer", pa.string()), *params])


def row(ident: str, stimulus: Stimulus) -> dict[str, Any]:
    p = stimulus.params
    return {"id": ident, "image": {"bytes": stimulus.png, "path": f"{ident}.png"},
            "question": prompts.question(p.experiment),
            "answer": prompts.answer(p.experiment, p.feature, p.target_present),
            **p.model_dump()}


PARALLEL_FROM = 400  # stimuli; below this, starting worker processes costs more than it saves


def _drawn(planned: list[Trial]) -> Iterator[Stimulus]:
    """The stimuli in order, drawn by one worker process per core for a large design (each
    takes about 15 ms; the default design has about 3,400)."""
    workers = min(os.cpu_count() or 1, 8)
    if len(planned) < PARALLEL_FROM or workers < 2:
        return map(make_stimulus, planned)

    with pool(workers, "stimuli") as drawing:
        return iter(list(drawing.map(make_stimulus, planned, chunksize=32)))


def write_dataset(out_dir: Path, design: Design | None = None, seed: int = 0
                  ) -> dict[str, int]:
    """Write one parquet file per experiment (and the adaptive pool's); returns rows per
    folder."""
    design = design or Design()
    schema = arrow_schema()
    rows: dict[str, list[dict[str, Any]]] = {e: [] for e in design.experiments}
    every = [(POOL_FOLDER if pooled else trial.experiment, ident, trial)
             for pooled, made in ((False, trials(design, seed)), (True, pool_trials(design, seed)))
             for ident, trial in made]
    for (part, ident, _), stimulus in zip(every, _drawn([t for *_, t in every]), strict=True):
        rows.setdefault(part, []).append(row(ident, stimulus))
    for experiment, found in rows.items():
        folder = Path(out_dir) / experiment
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(found, schema=schema)
        pq.write_table(table, folder / "shard_00000.parquet", row_group_size=ROW_GROUP)
    return {e: len(r) for e, r in rows.items()}
