"""IllusionBench's published zero-shot recalls (`published.json` beside this file: the
paper's figure, digitised) and how a run lines up with them: the original protocol's shape
and scene recall per subset, and every run setting that differs from the paper's."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.illusionbench.spec import PROTOCOLS, SUBSETS, TASKS
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
PAPER_PROTOCOL = "original"


class Recalls(BaseModel, frozen=True):
    shape: float
    scene: float


class SourceRow(BaseModel, frozen=True):
    model: str
    IN: Recalls
    LOGO: Recalls
    ICON: Recalls


class SourceFile(published.PublishedFile, frozen=True):
    """published.json as written: one row per model of the figure, subsets in its order."""
    subsets: list[str]
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


@cache
def table() -> published.PublishedTable:
    data = source()
    columns = [published.Column(f"{subset}/{task}", "zero-shot recall, original protocol",
                                "", f"{subset} {task}", f"{subset} {task} recall",
                                f"{subset} {task} recall: share of images whose answer to the "
                                f"{task} prompt names the {task} (original bucket rule)")
               for subset in data.subsets for task in TASKS]
    rows = [published.Row(r.model, {"shots": 0},
                          {f"{s}/{t}": getattr(getattr(r, s), t)
                           for s in data.subsets for t in TASKS})
            for r in data.rows]
    models = [m.model() for m in data.models]
    return data.table(columns, models, rows)


def recall(block: dict[str, Any], task: str) -> published.RunValue:
    """A subset's recall for `task`: the task block's `recall` (and its interval), else the
    subset's `<task>_recall` and its interval."""
    inner = published.run_value(block.get(task), "recall")
    outer = published.run_value(block, f"{task}_recall")
    if inner.value is not None and (inner.ci95 is not None or outer.ci95 is None):
        return inner
    return outer if outer.value is not None else inner


def chosen_protocol(metrics: dict[str, Any]) -> str | None:
    """The paper's protocol when the run has it, else the run's first."""
    if PAPER_PROTOCOL in metrics:
        return PAPER_PROTOCOL
    return next((p for p in metrics if p in PROTOCOLS), None)


def subset_blocks(metrics: dict[str, Any], protocol: str | None
                  ) -> list[tuple[str, dict[str, Any]]]:
    """The protocol's blocks of the subsets the run evaluated, in the dataset's order."""
    blocks = (metrics.get(protocol) or {}) if protocol else {}
    return [(s, blocks[s]) for s in SUBSETS if isinstance(blocks.get(s), dict)]


def differences(info: RunInfo, metrics: dict[str, Any], protocol: str | None
                ) -> list[str]:
    data = source()
    options = info.options
    out = []
    if protocol is None:
        out.append("the run has no protocol's metrics")
    elif protocol != PAPER_PROTOCOL:
        out.append(f"protocol {protocol}: the run has no original-protocol metrics; the "
                   "paper's numbers use the original prompts and bucket rule")
    elif options.get("fix_quirks"):
        out.append("--fix-quirks: the original rule with its spelling quirks corrected; the "
                   "paper's rule has them (the run's metrics.json has both, under quirks)")
    n = options.get("num_samples")
    full = ", ".join(f"{s} {k:,}" for s, k in data.full_rows.items())
    if n is not None:
        how = ("the first" if options.get("sample_seed") is None else
               f"a stratified random (seed {options['sample_seed']})")
        out.append(f"samples: {how} {n} images per subset; the paper's: every image ({full})")
    else:
        rows = info.dataset.rows or {}
        short = [f"{s} {rows[s]:,}" for s, k in data.full_rows.items()
                 if s in rows and rows[s] < k]
        if short:
            out.append(f"samples: the data has {', '.join(short)} images; the paper's: every "
                       f"image ({full}; {data.full_rows_source})")
    for subset, block in subset_blocks(metrics, protocol):
        for task in TASKS:
            errors = (block.get(task) or {}).get("n_errors")
            if errors:
                out.append(f"{subset} {task}: {errors} failed requests are left out of its "
                           "recall; the paper scores every image")
    temperature = info.generation.temperature
    if temperature:
        out.append(f"temperature {temperature}: sampled answers; the paper decoded greedily "
                   "or by beam search")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    protocol = chosen_protocol(metrics)
    values = {}
    for subset, block in subset_blocks(metrics, protocol):
        for task in TASKS:
            if task in block or f"{task}_recall" in block:
                values[f"{subset}/{task}"] = recall(block, task)
    compared = f"{protocol} protocol" + (" (the paper's)" if protocol == PAPER_PROTOCOL else "")
    return published.RunBeside({"shots": 0},
                               f"{compared}: shape and scene recall per subset", values,
                               tuple(differences(info, metrics, protocol)))
