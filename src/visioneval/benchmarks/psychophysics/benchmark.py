"""The psychophysics benchmark: the stored stimuli sent as they are, each answer read as a
choice (detection) or yes/no (presence, conjunction), and thresholds, d′ and set-size
effects fitted from the counts (`summary.py`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from visioneval.benchmarks.psychophysics import parse, prompts, tables
from visioneval.benchmarks.psychophysics.options import EXPERIMENT_NAMES, PsychophysicsOptions
from visioneval.benchmarks.psychophysics.params import (
    CONJUNCTION,
    FEATURES,
    POOL_FOLDER,
    StimulusParams,
)
from visioneval.benchmarks.psychophysics.placement import AdaptiveDetection
from visioneval.benchmarks.psychophysics.summary import Settings, summarize
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Record, Request, Sample, SkippedRow, user
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo
from visioneval.core.solver import Ask, Solved, Solver
from visioneval.io import parquet

PARAMS = tuple(name for name in StimulusParams.model_fields if name != "target_box")
COLUMNS = ("id", "image", "question", "answer", *PARAMS)


def impossible(params: dict[str, Any]) -> str | None:
    """`field ...: why` for a stimulus row no observer could be measured on: a level that
    is not a finite number of at least 0 (a NaN level is no level of any fit: its answers
    would be paid for and then counted nowhere), a feature the experiments do not have, a
    set size under one item, a spread or conjunction angle that is not a finite number of
    at least 0, `target_present` that is not true or false. None for a usable row."""
    feature = params["feature"]
    if feature not in (*FEATURES, CONJUNCTION):
        return f"field `feature`: {feature!r} is not one of {', '.join((*FEATURES, CONJUNCTION))}"
    for name in ("level", "spread", "conjunction_deg"):
        value = params.get(name)
        if value is None and name != "level":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value) or value < 0:
            return f"field `{name}`: {value!r} is not a finite number of at least 0"
    size = params["set_size"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        return f"field `set_size`: {size!r} is not a whole number of at least 1"
    if not isinstance(params["target_present"], bool):
        return f"field `target_present`: {params['target_present']!r} is not true or false"
    return None


class Psychophysics(Benchmark[PsychophysicsOptions]):
    name = "psychophysics"
    # popout names the odd feature (detection, set size) and says whether one object
    # stands out (presence, conjunction).
    builtin_models = ("popout",)

    def __init__(self, options: PsychophysicsOptions):
        super().__init__(options)
        root = Path(options.data)
        if not root.is_dir():
            raise parquet.DataError(f"{root}: no such folder (make one with `visioneval data "
                                    "synth-psychophysics --out DIR`)")
        present = [e for e in EXPERIMENT_NAMES if (root / e).is_dir()]
        wanted = options.experiments or present
        absent = [e for e in wanted if e not in present]
        if absent or not wanted:
            raise parquet.DataError(f"{root}: no folder for experiment(s) "
                                    f"{', '.join(absent or EXPERIMENT_NAMES)} (it has "
                                    f"{', '.join(present) or 'none'})")
        self.root = root
        self.experiments = [e for e in EXPERIMENT_NAMES if e in wanted]
        adaptive = options.method == "adaptive"
        if adaptive and "detection" not in self.experiments:
            raise parquet.DataError("--method adaptive places detection trials: add "
                                    "detection to --experiments")
        if adaptive and not (root / POOL_FOLDER).is_dir():
            raise parquet.DataError(f"{root}: no {POOL_FOLDER} folder, the stimuli "
                                    "--method adaptive draws from (write the data again with "
                                    "`visioneval data synth-psychophysics`)")
        # Adaptive detection trials draw from the pool instead of the detection folder.
        folders = [POOL_FOLDER if adaptive and e == "detection" else e
                   for e in self.experiments]
        self.files: dict[str, list[Path]] = {
            f: parquet.parquet_files(root / f) for f in folders}
        self.adaptive: AdaptiveDetection | None = None
        if adaptive:
            self.adaptive = AdaptiveDetection(self.rows, self.sample, self.score,
                                              options.adaptive_trials, options.form)


    @cached_property
    def rows(self) -> ParquetRows:
        """The data's rows, one reader for the run (its row counts read once)."""
        return ParquetRows(self.root, self.files, COLUMNS, (), self.options.num_samples,
                           str(self.root))

    def data(self) -> ParquetRows:
        return self.rows

    def total(self) -> int:
        if self.adaptive is None:
            return super().total()
        others = [e for e in self.experiments if e != "detection"]  # each its own folder
        return self.adaptive.count() + self.rows.count(others)

    def samples(self) -> Iterator[Sample | SkippedRow]:
        if self.adaptive is None:
            yield from super().samples()
            return
        for experiment in self.experiments:
            if experiment == "detection":
                yield from self.adaptive.slots()
            else:
                yield from self.rows.group_samples(experiment, self.sample)

    @property
    def solve(self) -> Solver | None:
        """Adaptive detection slots choose their stimulus as they run; every other sample
        is asked as it is."""
        return None if self.adaptive is None else self._solve

    async def _solve(self, sample: Sample, ask: Ask) -> Solved:
        if self.adaptive is not None and sample.metadata.get("placement") == "adaptive":
            return await self.adaptive.solve(sample, ask)
        return Solved(await ask(Request(sample.messages, ask.settings)))

    @property
    def one_request_each(self) -> bool:
        """An adaptive slot chooses its stimulus and asks it once."""
        return True

    def learn(self, record: Record) -> None:
        """A resumed adaptive run's earlier answers, before its next session."""
        if self.adaptive is not None:
            self.adaptive.learn(record)

    def sample(self, row: DataRow) -> Sample:
        params = {name: row[name] for name in PARAMS}
        if params["experiment"] != ("detection" if row.group == POOL_FOLDER else row.group):
            raise Skip(f"experiment {params['experiment']!r} in the {row.group} folder")
        if any(params[k] is None for k in ("feature", "level", "set_size", "target_present")):
            raise Skip("feature, level, set_size or target_present is empty")
        if problem := impossible(params):
            raise Skip(f"{row.file}: {problem}")
        target = row.text("answer")
        expected = prompts.answer(params["experiment"], params["feature"],
                                  params["target_present"])
        if target != expected:  # scored against it, every answer would be wrong
            raise Skip(f"{row.file}: field `answer`: {target!r} is not the answer its "
                       f"stimulus has ({expected!r})")
        return Sample(id=row.text("id"), group=row.group, target=target,
                      messages=(user(row.image(), row.text("question")),),
                      metadata={"row": row.index, **params})

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        answer = parse.read(str(sample.metadata.get("experiment")), text)
        return ({"answer": answer},
                {"answer": {"correct": float(answer == sample.target),
                            "unparsed": float(answer is None)}})

    def summarize(self, records: Any) -> dict[str, Any]:
        o = self.options
        return summarize(records, Settings(o.criterion, o.form, o.bootstrap, o.seed,
                                            o.dispersion))

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write_csv(metrics, directory)


