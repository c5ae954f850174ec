"""IllusionBench as a benchmark: rows -> one request per (image, task, prompt family), scored
under every protocol that reads that family's responses; metrics per protocol side by side."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationInfo, field_validator, model_validator
from rich.console import Console

from visioneval import excerpts as stored
from visioneval.benchmarks.illusionbench import metrics, names, protocols, tables
from visioneval.benchmarks.illusionbench.prompts import prompt
from visioneval.benchmarks.illusionbench.sampling import stratified
from visioneval.benchmarks.illusionbench.spec import (
    COLUMNS,
    FAMILY,
    HF_REPO,
    ORIGINAL_FIXED,
    PROTOCOLS,
    SUBSETS,
    TASKS,
    split_name,
)
from visioneval.core.records import Record, Sample, SkippedRow, user
from visioneval.core.runfiles import BenchmarkPlan, RunInfo
from visioneval.io import parquet
from visioneval.io.images import Image, ImageError

Protocol = Literal["original", "lmms-strict", "lmms-recall", "all"]


def choose(option: str, values: list[str] | None) -> list[str]:
    """`--subsets` or `--tasks` checked and put in canonical order (all when None)."""
    known = SUBSETS if option == "subsets" else TASKS
    if values is None:
        return list(known)
    chosen = {v.upper() if option == "subsets" else v.lower() for v in values}
    bad = sorted(chosen - set(known))
    if bad or not chosen:
        raise ValueError(f"--{option}: unknown {', '.join(bad) or '(none)'}; "
                         f"choose from {', '.join(known)}")
    return [k for k in known if k in chosen]


class IllusionBenchOptions(BaseModel, frozen=True):
    subsets: list[str] = list(SUBSETS)
    tasks: list[str] = list(TASKS)
    protocol: Protocol = "all"
    fix_quirks: bool = False
    num_samples: int | None = None
    sample_seed: int | None = None
    data_dir: str | None = None

    @field_validator("subsets", "tasks")
    @classmethod
    def _known(cls, value: list[str], info: ValidationInfo) -> list[str]:
        return choose(info.field_name or "", value)

    @model_validator(mode="after")
    def _seed_needs_n(self) -> IllusionBenchOptions:
        if self.sample_seed is not None and self.num_samples is None:
            raise ValueError("--sample-seed draws --num-samples rows per subset; give both")
        return self

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def families(self) -> list[str]:
        """Prompt families to request: one request serves every protocol of its family."""
        wanted = {FAMILY[p] for p in self.protocols}
        return [f for f in ("original", "lmms") if f in wanted]


class IllusionBench:
    name = "illusionbench"
    builtin_models = ("random",)  # popout and majority answer SalBench's question
    solve = None  # one request per sample
    judge = None  # no judge model

    def __init__(self, options: IllusionBenchOptions, root: Path, files: dict[str, list[Path]]):
        self.options = options
        self.root = root
        self.files = files

    # -- plan ------------------------------------------------------------------------------
    def plan(self) -> BenchmarkPlan:
        return parquet.dataset_plan(self.name, self.options, self.root, self.files,
                                    self.options.data_dir or f"hf://{HF_REPO}")

    @property
    def per_row(self) -> int:
        """Samples per image: one per task and prompt family."""
        return len(self.options.tasks) * len(self.options.families)

    def total(self) -> int:
        limit = self.options.num_samples
        rows = sum(min(n, limit) if limit is not None else n
                   for n in (parquet.row_count(fs) for fs in self.files.values()))
        return rows * self.per_row

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        for subset in self.options.subsets:
            yield from self._subset_samples(subset)

    def _subset_samples(self, subset: str) -> Iterator[Sample | SkippedRow]:
        files = self.files[subset]
        for path, missing, rows in parquet.files_missing_columns(files, COLUMNS,
                                                                 self.options.num_samples):
            yield SkippedRow(subset, f"{path.name} (every row)",
                             f"missing column(s) {', '.join(missing)}", rows * self.per_row)
        seen: set[str] = set()
        for row in self._rows(subset, files):
            if any(c not in row.values for c in COLUMNS):
                continue  # the whole file was reported above
            items = self._row_samples(subset, row)
            if isinstance(items, SkippedRow):
                yield items
                continue
            name = items[0].metadata["image_name"]
            suffix = f"#{row.index}" if name in seen else ""
            seen.add(name)
            for sample in items:
                sample.id += suffix
                yield sample

    def _rows(self, subset: str, files: list[Path]) -> Iterator[parquet.Row]:
        """The subset's rows: all, the first N, or a stratified random N (--sample-seed)."""
        n, seed = self.options.num_samples, self.options.sample_seed
        if seed is None:
            return parquet.iter_rows(files, COLUMNS, limit=n)
        strata = ((row.index, _stratum(subset, row.values.get("image_name")))
                  for row in parquet.iter_rows(files, ("image_name",)))
        wanted = stratified(strata, n or 0, seed, split_name(subset))
        return parquet.iter_rows(files, COLUMNS, wanted=wanted)

    def _row_samples(self, subset: str, row: parquet.Row) -> list[Sample] | SkippedRow:
        """One sample per (task, family) for a row, sharing one image; or why it is skipped."""
        raw = row.values.get("image_name")
        where = f"image_name {raw}" if isinstance(raw, str) and raw.strip() else f"#{row.index}"
        try:
            parsed = names.parse(subset, raw)
            image = Image.from_bytes(parquet.image_bytes(row.values["image"]))
        except ImageError as exc:
            return SkippedRow(subset, where, f"undecodable image: {exc}", self.per_row)
        except ValueError as exc:  # a bad name, no bytes, or a cell that is not an image
            return SkippedRow(subset, where, str(exc), self.per_row)
        name = str(raw).strip()  # names.parse refused a name that is not text
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

    def print_summary(self, metrics: dict[str, Any], info: RunInfo,
                      console: Console) -> None:
        tables.show(metrics, info.backend.model, console)


def _stratum(subset: str, image_name: object) -> tuple[str, str]:
    try:
        parsed = names.parse(subset, image_name)
    except names.BadImageName:
        return ("", "")
    return (parsed.shape, parsed.difficulty)


def build(options: dict[str, Any] | IllusionBenchOptions) -> IllusionBench:
    """The benchmark from its options (as run.json records them); finds the data."""
    from visioneval.benchmarks.illusionbench.data import locate

    options = IllusionBenchOptions.model_validate(options)
    data_dir = Path(options.data_dir) if options.data_dir else None
    root, files = locate(data_dir, options.subsets)
    return IllusionBench(options, root, files)


def scoring_only(options: IllusionBenchOptions) -> IllusionBench:
    """IllusionBench without data: scores and summarizes records, reads no row."""
    return IllusionBench(options, Path(), {subset: [] for subset in options.subsets})
