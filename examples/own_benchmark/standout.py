"""Your own benchmark in one file: what makes the odd object stand out in SalBench's synthetic
scenes (`visioneval data synth-salbench`), asked in your words, scored by the first feature
the answer names, with a table of accuracy per difficulty (docs/adding-a-benchmark.md)."""
from __future__ import annotations

from pydantic import BaseModel, Field

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition, LocalPath
from visioneval.core.records import Sample, user
from visioneval.core.rows import DataRow, ParquetRows

FEATURES = ("orientation", "color", "size")
QUESTION = "One object differs from the others. In what? Options: orientation, color, size."


class Options(BaseModel):
    data: LocalPath = Field(description="Folder of parquet files: image, answer, image_id.")
    num_samples: int | None = Field(None, ge=1, description="Only the first N rows.")


class StandOut(Benchmark[Options]):
    name = "standout"
    builtin_models = ("random",)  # a chance baseline: one of the options at random

    def data(self) -> ParquetRows:
        return ParquetRows.folder(self.options.data, ("image", "answer", "image_id"),
                                  limit=self.options.num_samples)

    def sample(self, row: DataRow) -> Sample:
        image_id = row.text("image_id")  # image_<shape>_<angle>_<feature>_<difficulty>_...
        return Sample(id=image_id, group=image_id.split("_")[4], target=row.text("answer"),
                      messages=(user(row.image(), QUESTION),))

    def score(self, sample: Sample, text: str) -> tuple[dict, dict]:
        said = text.lower()
        found = sorted((said.find(f), f) for f in FEATURES if f in said)
        answer = found[0][1] if found else None  # the feature named first
        return {"answer": answer}, {"feature": {"correct": float(answer == sample.target)}}


class StandOutDefinition(BenchmarkDefinition):
    summary = "Which feature makes the odd object stand out, in your own words."
    benchmark = StandOut
