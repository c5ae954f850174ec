"""SalBench as a benchmark: rows -> samples (zero- or few-shot), two parsers, paper metrics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from visioneval import excerpts as stored
from visioneval.benchmarks.salbench import tables
from visioneval.benchmarks.salbench.data import locate
from visioneval.benchmarks.salbench.metrics import ConfigTally, TaskPool, pool_tasks
from visioneval.benchmarks.salbench.options import SalBenchOptions
from visioneval.benchmarks.salbench.parse import (
    lenient_labels,
    rejects,
    strict_tokens,
    target_absent,
    target_labels,
)
from visioneval.benchmarks.salbench.prompts import (
    Example,
    ExamplePlan,
    choose_examples,
    family_group,
    family_id,
    few_shot,
    zero_shot,
)
from visioneval.benchmarks.salbench.spec import CONFIGS, HF_REPO, SPLIT, ConfigSpec
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Record, Sample, SkippedRow
from visioneval.core.rowcounts import read_counts
from visioneval.core.rows import DataRow, ParquetRows, Skip, cell_image
from visioneval.core.runfiles import RunInfo
from visioneval.io import parquet
from visioneval.metrics.labelsets import sample_scores

if TYPE_CHECKING:
    from visioneval.core.rowcounts import PublishedRows

__all__ = ["SalBench", "SalBenchOptions", "ScoringOnly", "build"]

COLUMNS = ("image", "question", "answer", "image_id")
TEXT_COLUMNS = ("question", "answer", "image_id")
DIFFICULTY = "difficulty"


class SalBench(Benchmark[SalBenchOptions]):
    name = "salbench"
    builtin_models = ("popout", "random", "majority")

    def __init__(self, options: SalBenchOptions, root: Path | None):
        """`root`: the local copy (--data-dir), or None for the Hub's, found or downloaded
        only when a row is first read (a dry run counts the published rows instead)."""
        super().__init__(options)
        self.specs = [CONFIGS[c] for c in options.configs]
        if root is not None:
            self.root = root

    @cached_property
    def root(self) -> Path:
        return locate(None, self.options.configs)

    @cached_property
    def files(self) -> dict[str, list[Path]]:
        return {s.name: parquet.parquet_files(self.root / s.name) for s in self.specs}

    def published_rows(self) -> PublishedRows | None:
        """The Hub's row counts of the configs asked (`rows.json`), without --data-dir."""
        if self.options.data_dir is not None:
            return None

        return read_counts(Path(__file__).with_name("rows.json"), list(self.options.configs),
                           self.options.num_samples, images_per_request=1 + self.options.shots)

    @property
    def asked(self) -> str:
        """The prompt family the benchmark's own samples are asked in: the headline's
        (`--prompt both` adds lmms-eval's as a request variant, `variants.py`)."""
        return self.options.families[0]

    def data(self) -> ParquetRows:
        # A `difficulty` column is read when a file has one (SalBench's own configs carry
        # none, docs/salbench.md): the metrics then give results per difficulty.
        source = str(self.options.data_dir) if self.options.data_dir else \
            f"hf://{HF_REPO} (split {SPLIT})"
        return ParquetRows(self.root, self.files, COLUMNS, (DIFFICULTY,),
                           self.options.num_samples, source)

    # -- samples -----------------------------------------------------------------------------
    def samples(self) -> Iterator[Sample | SkippedRow]:
        rows = self.data()
        for spec in self.specs:
            plan, examples = self._examples(spec) if self.options.shots else (None, {})
            yield from rows.group_samples(
                spec.name, partial(self._row_samples, spec, plan, examples),
                where=lambda row: f"image_id {_name(row)}",
                unique=self._unique)

    def _row_samples(self, spec: ConfigSpec, plan: ExamplePlan | None,
                     examples: dict[int, Example], row: DataRow) -> Sample:
        """A row's sample in the headline prompt family; Skip says why not."""
        values = row.values
        problem = _row_problem(spec, values)
        if problem:
            raise Skip(problem)
        image = row.image()
        question, name, families = values["question"], _name(row), self.options.families
        chosen = [examples[r] for r in plan.for_query(row.index) if r in examples] \
            if plan is not None else []
        family = self.asked
        messages = zero_shot(question, image, family) if plan is None else \
            few_shot(spec, question, image, chosen, family)
        return Sample(
            id=family_id(f"{spec.name}/{name}", family, families),
            group=family_group(spec.name, family, families),
            messages=messages, target=values["answer"],
            metadata={"config": spec.name, "task": spec.task, "dataset": spec.dataset,
                      "image_id": name, "row": row.index, "shots": self.options.shots,
                      "prompt": family, **_difficulty(values)})

    def _unique(self, sample: Sample, suffix: str) -> None:
        """A repeated image_id: the suffix after it, before a second family's `@family`."""
        meta = sample.metadata
        sample.id = family_id(f"{meta['config']}/{meta['image_id']}{suffix}", meta["prompt"],
                              self.options.families)

    def _examples(self, spec: ConfigSpec) -> tuple[ExamplePlan, dict[int, Example]]:
        """Pick the config's few-shot examples from its whole split and read their images."""
        files = self.files[spec.name]
        labels = {}
        for row in parquet.iter_rows(files, TEXT_COLUMNS):
            answer = row.values.get("answer")
            # A target-absent row is never an example: every example shows a feature.
            if isinstance(answer, str) and answer.strip():
                gold = target_labels(answer)
                if gold <= set(spec.classes):
                    labels[row.index] = frozenset(gold)
        plan = choose_examples(labels, spec.classes, self.options.shots, self.options.seed,
                               spec.name)
        wanted = set(plan.rows) | set(plan.spares.values())
        examples = {}
        for row in parquet.iter_rows(files, COLUMNS, wanted=wanted):
            try:
                image = cell_image(row.values["image"])
            except Skip:
                continue
            image.shared = True  # sent with every query of the config: encode once
            ordered = tuple(c for c in spec.classes if c in labels[row.index])
            examples[row.index] = Example(row.index, image, row.values["question"], ordered)
        return plan, examples

    # -- scoring -------------------------------------------------------------------------------
    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        classes = CONFIGS[sample.metadata.get("config", sample.group)].classes
        predictions = {"strict": strict_tokens(text), "lenient": lenient_labels(text, classes)}
        # The record keeps what was extracted, capped (a long answer is in response.text).
        parsed = {name: stored.pieces(pred, classes) for name, pred in predictions.items()}
        if target_absent(sample.target):
            # A target-absent row: exact match is a correct rejection (no feature named).
            return parsed, {name: dict.fromkeys(("exact_match", "sample_f1"),
                                                float(rejects(name, pred)))
                            for name, pred in predictions.items()}
        gold = target_labels(sample.target)
        scores = {name: sample_scores(pred, gold) for name, pred in predictions.items()}
        return parsed, scores

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        """Metrics per config, keyed by config; a second prompt family's records (their
        group names the family) are tallied inside their config's block."""
        families = self.options.families
        tallies = {s.name: ConfigTally(CONFIGS[s.name].classes, families) for s in self.specs}
        pools = {ds: TaskPool(CONFIGS[ds].classes, families[0]) for ds in ("P3", "O3")}
        for record in records:
            config = (record.metadata or {}).get("config", record.group)
            if config not in tallies and config in CONFIGS:
                tallies[config] = ConfigTally(CONFIGS[config].classes, families)
            if config in tallies:
                tallies[config].add(record)
                pools[CONFIGS[config].dataset].add(record, config)
        out = {name: tally.result(name) for name, tally in tallies.items()}
        pool_tasks(out, pools)
        return out

    def headline_outcome(self, record: Record) -> float | None:
        """Strict exact match of an answered row in the headline prompt family (the
        proportion SalBench reports beside macro F1); target-absent rows do not count."""
        family = (record.metadata or {}).get("prompt") or self.options.families[0]
        if not record.ok or family != self.options.families[0] or (
                isinstance(record.target, str) and target_absent(record.target)):
            return None
        return float(record.scores.get("strict", {}).get("exact_match", 0.0))

    def headline_proportion(self) -> str | None:
        return "strict exact match"

    def majority_answers(self) -> dict[tuple[str, ...], str]:
        """The most common answer per class vocabulary (P3 or O3), for the majority baseline;
        target-absent rows are left out (their "None" is not an answer the prompt offers)."""
        counts: dict[tuple[str, ...], Counter] = {}
        for spec in self.specs:
            for row in parquet.iter_rows(self.files[spec.name], ("answer",)):
                answer = row.values.get("answer")
                if isinstance(answer, str) and answer.strip() and not target_absent(answer):
                    counts.setdefault(spec.classes, Counter())[answer.strip()] += 1
        return {classes: c.most_common(1)[0][0] for classes, c in counts.items()}

    # -- output ---------------------------------------------------------------------------------
    def label(self, info: RunInfo) -> dict[str, Any]:
        return {"model": info.backend.model, "shots": self.options.shots}

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write(metrics, self.label(info), directory)


def _row_problem(spec: ConfigSpec, values: dict[str, Any]) -> str | None:
    """Why a row cannot be a sample, or None."""
    for column in ("question", "answer"):
        if not isinstance(values.get(column), str) or not values[column].strip():
            return f"column '{column}' is empty or not text"
    if values.get("image") is None:
        return "column 'image' is empty"
    if target_absent(values["answer"]):
        # A target-absent control row: read by Detection, whose question names no target.
        return None if spec.task == "D" else (
            f"answer {values['answer']!r} (no feature differs) is read in Detection configs "
            f"only; {spec.name}'s question points at a target")
    outside = target_labels(values["answer"]) - set(spec.classes)
    if outside:
        return (f"answer {values['answer']!r} has label(s) {', '.join(sorted(outside))} outside "
                f"the {spec.dataset} classes ({', '.join(spec.classes)})")
    return None


def build(options: Mapping[str, Any] | BaseModel) -> SalBench:
    """The benchmark from its options (as run.json records them); finds the data."""
    options = SalBenchOptions.model_validate(options)
    local = options.data_dir
    return SalBench(options, locate(local, options.configs) if local is not None else None)


def _name(row: DataRow) -> str:
    """A row's image_id, or its index when it has none."""
    image_id = row.values.get("image_id")
    return str(image_id) if image_id not in (None, "") else f"#{row.index}"


def _difficulty(values: dict[str, Any]) -> dict[str, str]:
    """{"difficulty": level} when the row has a non-empty difficulty, else nothing."""
    level = values.get(DIFFICULTY)
    if level is None or not str(level).strip():
        return {}
    return {DIFFICULTY: str(level).strip().lower()}


class ScoringOnly(SalBench):
    """SalBench without its data: scores and summarizes records, reads no row (a log holds
    the answers; its images are gone)."""

    def __init__(self, options: SalBenchOptions):
        Benchmark.__init__(self, options)
        self.root = Path()
        self.specs = [CONFIGS[c] for c in options.configs]
        self.files = {s.name: [] for s in self.specs}
