"""SalBench's published leaderboard (`published.json` beside this file: the authors' README
tables, as printed) and how a run lines up with it: the strict parser's exact match, macro
F1 and per-class F1 per config, and every run setting that differs from the paper's."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.salbench.spec import CONFIGS, TASK_SUFFIX, TASKS, ConfigSpec
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
SETS = {"P3": "synthetic", "O3": "natural"}
# How far a printed F1 Overall may be from the mean of its per-class F1 before the cell says
# so (the README prints one decimal; tests/test_reference_data.py checks with the same bound).
MEAN_TOLERANCE = 0.1


class SetCells(BaseModel, frozen=True):
    """One image set of one README row: D, R, VR in that order."""
    em: tuple[float, float, float]
    f1: tuple[float, float, float]
    per_class_f1: dict[str, tuple[float, float, float]]


class RowKey(BaseModel, frozen=True):
    """Which README row: a model at a number of shots."""
    model: str
    shots: int

    @property
    def key(self) -> tuple[str, int]:
        return self.model, self.shots


class SourceRow(RowKey, frozen=True):
    P3: SetCells
    O3: SetCells


class SourceModel(BaseModel, frozen=True):
    name: str
    printed: dict[str, str]
    note: str = ""


class CellNote(RowKey, frozen=True):
    cell: str
    note: str


class SourceFile(published.PublishedFile, frozen=True):
    """published.json as written: the README's layout, so it reads against the source."""
    cell_notes: list[CellNote]
    per_class_order: dict[str, list[str]]
    models: list[SourceModel]
    rows: list[SourceRow]


def config_of(image_set: str, task: str) -> str:
    return image_set + TASK_SUFFIX[task]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


def columns(data: SourceFile) -> list[published.Column]:
    """Headline tables first (EM and F1 Overall per task), then per-class F1 by task."""
    out = []
    for image_set, kind in SETS.items():
        n = len(data.per_class_order[image_set])
        table = f"{image_set} ({kind}): exact match and F1 Overall"
        for metric, meaning in (
                ("em", "exact match of the label set, percent of samples (strict parser)"),
                ("f1", f"F1 Overall: macro F1 over the {n} {image_set} classes (strict "
                       "parser)")):
            for task in TASKS:
                out.append(published.Column(f"{image_set}/{task}/{metric}", table, "",
                                            f"{metric.upper()} {task}",
                                            f"{image_set} {task} {metric.upper()}",
                                            f"{TASKS[task]}: {meaning}"))
    for image_set in SETS:
        for task in TASKS:
            for label in data.per_class_order[image_set]:
                out.append(published.Column(f"{image_set}/{task}/f1/{label}",
                                            f"{image_set}: per-class F1", task, label,
                                            f"{image_set} {task} F1 {label}",
                                            f"{TASKS[task]}: F1 of class {label}, TP, FP and "
                                            "FN pooled over samples (strict parser)"))
    return out


def _cells(row: SourceRow) -> dict[str, float]:
    cells = {}
    for image_set in SETS:
        block: SetCells = getattr(row, image_set)
        for i, task in enumerate(TASKS):
            cells[f"{image_set}/{task}/em"] = block.em[i]
            cells[f"{image_set}/{task}/f1"] = block.f1[i]
            for label, values in block.per_class_f1.items():
                cells[f"{image_set}/{task}/f1/{label}"] = values[i]
    return cells


def mean_mismatches(row: SourceRow) -> dict[str, str]:
    """F1 Overall cells the row's own per-class F1 contradict (their mean is more than
    `MEAN_TOLERANCE` away), each with a sentence saying so."""
    out = {}
    for image_set in SETS:
        block: SetCells = getattr(row, image_set)
        for i, task in enumerate(TASKS):
            per_class = [values[i] for values in block.per_class_f1.values()]
            mean = sum(per_class) / len(per_class)
            if not abs(mean - block.f1[i]) <= MEAN_TOLERANCE:
                out[f"{image_set}/{task}/f1"] = (f"printed {block.f1[i]:.1f}, but the mean of "
                                                 f"its per-class F1 is {mean:.1f}")
    return out


@cache
def table() -> published.PublishedTable:
    data = source()
    notes: dict[tuple[str, int], dict[str, str]] = {}
    for note in data.cell_notes:
        notes.setdefault(note.key, {})[note.cell] = note.note
    rows = []
    for row in data.rows:
        cell_notes = mean_mismatches(row)
        for key, text in notes.get(row.key, {}).items():
            cell_notes[key] = f"{cell_notes[key]}; {text}" if key in cell_notes else text
        rows.append(published.Row(row.model, {"shots": row.shots}, _cells(row), cell_notes))
    models = [published.Model(m.name, tuple(dict.fromkeys(m.printed.values())), (), m.note)
              for m in data.models]
    return data.table(columns(data), models, rows)


def run_values(metrics: dict[str, Any]) -> dict[str, published.RunValue]:
    """The run's strict-parser numbers under the published columns' keys (configs the run
    did not evaluate are left out)."""
    out = {}
    for image_set in SETS:
        for task in TASKS:
            config = config_of(image_set, task)
            if config not in metrics:
                continue
            block = metrics[config].get("strict") or {}
            out[f"{image_set}/{task}/em"] = published.run_value(block, "exact_match")
            out[f"{image_set}/{task}/f1"] = published.run_value(block, "macro_f1")
            for label, scores in (block.get("per_class") or {}).items():
                out[f"{image_set}/{task}/f1/{label}"] = published.run_value(scores, "f1")
    return out


def differences(info: RunInfo, metrics: dict[str, Any]) -> list[str]:
    """Every setting of the run that differs from the paper's protocol (shots are compared
    with the published row by the caller)."""
    options = info.options
    configs = [CONFIGS[c] for c in metrics if c in CONFIGS]
    out = _prompt_and_shots(options)
    out += _samples(options, info.dataset.rows or {}, configs)
    for spec in configs:
        strict = metrics[spec.name].get("strict") or {}
        if strict.get("n_errors"):
            out.append(f"{spec.name}: {strict['n_errors']} failed requests are left out of "
                       "its scores; the paper scores every row")
        classes = strict.get("per_class")
        if classes is not None and len(classes) < len(spec.classes):
            out.append(f"{spec.name}: its F1 averages {len(classes)} classes (as lmms-eval "
                       f"main's O3 F1 does); the paper's averages all {len(spec.classes)}")
    if options.get("prompt") == "lmms-eval" and any(s.dataset == "O3" for s in configs):
        out.append("lmms-eval's own O3 F1 (all_cat_f1) is a 3-class mean; the O3 F1 here "
                   "averages all 7 classes, as the paper's does")
    return out


def _prompt_and_shots(options: dict[str, Any]) -> list[str]:
    out = []
    prompt = options.get("prompt", "paper")
    if prompt == "lmms-eval":
        out.append("prompt lmms-eval: the question plus lmms-eval's \"Answer the question "
                   "using a single word or phrase.\"; the paper's: the question verbatim")
    elif prompt not in ("paper", "both"):  # both: the headline is the paper's prompt
        out.append(f"prompt {prompt}: the paper's is the dataset question verbatim")
    if options.get("shots"):
        out.append(f"{options['shots']} shots: examples chosen by visioneval's seeded rule "
                   f"(seed {options.get('seed', 0)}); the paper does not say how it chose "
                   "its examples")
    return out


def _samples(options: dict[str, Any], rows: dict[str, int], configs: list[ConfigSpec]
             ) -> list[str]:
    """Fewer rows than the published set: --num-samples, or data with fewer rows (where the
    full count is known)."""
    if options.get("num_samples") is not None:
        return [f"samples: the first {options['num_samples']} rows of each config "
                "(--num-samples); the paper scores every row"]
    data = source()
    short = [f"{s.name} {rows[s.name]}" for s in configs
             if s.name in rows and rows[s.name] < data.full_rows.get(s.dataset, 0)]
    if not short:
        return []
    full = ", ".join(f"{k} per {d} config" for d, k in data.full_rows.items())
    return [f"samples: the data has {', '.join(short)} rows; the published set {full} "
            f"({data.full_rows_source})"]


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    return published.RunBeside({"shots": int(info.options.get("shots", 0))},
                               "strict parser (the paper's): exact match, macro F1 over every "
                               "class, per-class F1", run_values(metrics),
                               tuple(differences(info, metrics)))
