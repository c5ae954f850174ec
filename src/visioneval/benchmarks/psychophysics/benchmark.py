"""The psychophysics benchmark: the stored stimuli sent as they are, each answer read as a
choice (detection) or yes/no (presence, conjunction), and thresholds, d′ and set-size
effects fitted from the counts (`summary.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.psychophysics import parse, tables
from visioneval.benchmarks.psychophysics.options import EXPERIMENT_NAMES, PsychophysicsOptions
from visioneval.benchmarks.psychophysics.params import StimulusParams
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Sample, user
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo
from visioneval.io import parquet

PARAMS = tuple(name for name in StimulusParams.model_fields if name != "target_box")
COLUMNS = ("id", "image", "question", "answer", *PARAMS)


class Psychophysics(Benchmark[PsychophysicsOptions]):
    name = "psychophysics"

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
        self.files: dict[str, list[Path]] = {
            e: parquet.parquet_files(root / e) for e in self.experiments}

    @property
    def builtin_models(self) -> tuple[str, ...]:
        """popout names the odd feature (detection, set size); it has no yes/no answer."""
        return ("popout",) if set(self.experiments) <= {"detection", "setsize"} else ()

    def data(self) -> ParquetRows:
        return ParquetRows(self.root, self.files, COLUMNS, (), self.options.num_samples,
                           str(self.root))

    def sample(self, row: DataRow) -> Sample:
        params = {name: row[name] for name in PARAMS}
        if params["experiment"] != row.group:
            raise Skip(f"experiment {params['experiment']!r} in the {row.group} folder")
        if any(params[k] is None for k in ("feature", "level", "set_size", "target_present")):
            raise Skip("feature, level, set_size or target_present is empty")
        return Sample(id=row.text("id"), group=row.group, target=row.text("answer"),
                      messages=(user(row.image(), row.text("question")),),
                      metadata={"row": row.index, **params})

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        answer = parse.read(str(sample.metadata.get("experiment")), text)
        return ({"answer": answer},
                {"answer": {"correct": float(answer == sample.target),
                            "unparsed": float(answer is None)}})

    def summarize(self, records: Any) -> dict[str, Any]:
        from visioneval.benchmarks.psychophysics.summary import Settings, summarize

        o = self.options
        return summarize(records, Settings(o.criterion, o.form, o.bootstrap, o.seed))

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write_csv(metrics, directory)

    def print_summary(self, metrics: dict[str, Any], info: RunInfo,
                      console: Console) -> None:
        tables.show(metrics, f"{self.name}: {info.backend.model}", console)

