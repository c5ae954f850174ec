"""IllusionBench as a benchmark: rows -> one request per (image, task, prompt family), scored
under every protocol that reads that family's responses; metrics per protocol side by side."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval import excerpts as stored
from visioneval.benchmarks.illusionbench import metrics, names, protocols, tables
from visioneval.benchmarks.illusionbench.data import locate
from visioneval.benchmarks.illusionbench.options import IllusionBenchOptions, choose
from visioneval.benchmarks.illusionbench.prompts import prompt
from visioneval.benchmarks.illusionbench.sampling import stratified
from visioneval.benchmarks.illusionbench.spec import (
    COLUMNS,
    HF_REPO,
    ORIGINAL_FIXED,
    split_name,
)
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo
from visioneval.io import parquet

if TYPE_CHECKING:
    from visioneval.core.rowcounts import PublishedRows

__all__ = ["IllusionBench", "IllusionBenchOptions", "build", "choose", "scoring_only"]


class IllusionBench(Benchmark[IllusionBenchOptions]):
    name = "illusionbench"
    builtin_models = ("random",)  # popout and majority answer SalBench's question

    def __init__(self, options: IllusionBenchOptions, root: Path | None = None,
                 files: dict[str, list[Path]] | None = None):
        """`root` and `files`: the local copy (--data-dir), or None for the Hub's, found or
        downloaded only when a row is first read (a dry run counts the published rows)."""
        super().__init__(options)
        if root is not None and files is not None:
            self.root, self.files = root, files

    @cached_property
    def _located(self) -> tuple[Path, dict[str, list[Path]]]:
        return locate(None, self.options.subsets)

    @cached_property
    def root(self) -> Path:
        return self._located[0]

    @cached_property
    def files(self) -> dict[str, list[Path]]:
        return self._located[1]

    def published_rows(self) -> PublishedRows | None:
        """The Hub's row counts of the subsets asked (`rows.json`), without --data-dir; the
        text of every request is the benchmark's own prompt, so it is counted exactly."""
        if self.options.data_dir is not None:
            return None

        subsets = list(self.options.subsets)
        counts = read_counts(Path(__file__).with_name("rows.json"), subsets,
                             self.options.num_samples, requests_per_row=self.per_row)
        pairs = [(t, f) for t in self.options.tasks for f in self.options.families]
        rows = {s: counts.rows(s) or 0 for s in subsets}
        chars = sum(rows[s] * len(prompt(f, s, t)) for s in subsets for t, f in pairs)
        requests = sum(rows.values()) * len(pairs)
        return replace(counts, prompt_chars=round(chars / requests) if requests else 0,
                       chars_source="")

    @property
    def per_row(self) -> int:
        """Samples per image: one per task and prompt family."""
        return len(self.options.tasks) * len(self.options.families)

    def data(self) -> ParquetRows:
        source = str(self.options.data_dir) if self.options.data_dir else f"hf://{HF_REPO}"
        return ParquetRows(self.root, self.files, COLUMNS, limit=self.options.num_samples,
                           source=source)

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        rows = self.data()
        for subset in self.options.subsets:
            yield from rows.group_samples(subset, self._row_samples, per_row=self.per_row,
                                          wanted=self._drawn(subset), where=_where)

    def _drawn(self, subset: str) -> set[int] | None:
        """The rows of a stratified random draw (--sample-seed); None: the first N."""
        n, seed = self.options.num_samples, self.options.sample_seed
        if seed is None:
            return None
        strata = ((row.index, _stratum(subset, row.values.get("image_name")))
                  for row in parquet.iter_rows(self.files[subset], ("image_name",)))
        return stratified(strata, n or 0, seed, split_name(subset))

    def _row_samples(self, row: DataRow) -> list[Sample]:
        """One sample per (task, family) for a row, sharing one image; Skip says why not."""
        subset = row.group
        try:
            parsed = names.parse(subset, row["image_name"])
        except ValueError as exc:  # a name that does not follow the subset's pattern
            raise Skip(str(exc)) from None
        image = row.image()
        name = str(row["image_name"]).strip()  # names.parse refused a name that is not text
        meta = {"subset": subset, "image_name": name, "row": row.index, "shape": parsed.shape,
                "scene": parsed.scene, "difficulty": parsed.difficulty}
        return [Sample(id=f"{subset}/{name}/{task}/{family}", group=subset,
                       messages=(user(image, prompt(family, subset, task)),),
                       target={"shape": parsed.shape, "scene": parsed.scene},
                       metadata=meta | {"task": task, "family": family})
                for task in self.options.tasks for family in self.options.families]

    # -- scoring -------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        """Every protocol that reads this prompt family, on the same response."""
        label = sample.target[sample.metadata["task"]]
        if sample.metadata["family"] == "lmms":
            answer, ok = protocols.lmms_strict(text, label)
            # The record keeps the extracted answer, capped (the whole is in response.text).
            return ({"lmms-strict": stored.excerpt(answer)},
                    {"lmms-strict": {"correct": float(ok)}})
        shape, scene = sample.target["shape"], sample.target["scene"]
        want = "shape" if sample.metadata["task"] == "shape" else "texture"
        parsed: dict[str, Any] = {}
        scores: dict[str, dict] = {}
        for rule, fixed in (("original", False), (ORIGINAL_FIXED, True)):
            bucket = protocols.original_bucket(text, shape, scene, fixed=fixed)
            parsed[rule], scores[rule] = bucket, {"correct": float(bucket == want)}
        found, ok = protocols.lmms_recall(text, label)
        parsed["lmms-recall"], scores["lmms-recall"] = found, {"correct": float(ok)}
        return parsed, scores

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        o = self.options
        return metrics.summarize(records, o.protocols, o.subsets, o.tasks, o.fix_quirks)


    # -- output ---------------------------------------------------------------------------------
    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write(metrics, directory)


def _where(row: DataRow) -> str:
    raw = row["image_name"]
    return f"image_name {raw}" if isinstance(raw, str) and raw.strip() else f"#{row.index}"


def _stratum(subset: str, image_name: object) -> tuple[str, str]:
    try:
        parsed = names.parse(subset, image_name)
    except names.BadImageName:
        return ("", "")
    return (parsed.shape, parsed.difficulty)


def build(options: Mapping[str, Any] | BaseModel) -> IllusionBench:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = IllusionBenchOptions.model_validate(options)
    if options.data_dir is None:
        return IllusionBench(options)
    root, files = locate(options.data_dir, options.subsets)
    return IllusionBench(options, root, files)


def scoring_only(options: BaseModel) -> IllusionBench:
    """IllusionBench without data: scores and summarizes records, reads no row."""
    options = IllusionBenchOptions.model_validate(options)
    return IllusionBench(options, Path(), {subset: [] for subset in options.subsets})
