"""BlindTest's published numbers (`published.json` beside this file): the paper's Table 1,
per task and the task mean, as lmms-eval's README reproduces it, and how a run lines up."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.blindtest.spec import PAPER, PAPER_TASKS
from visioneval.benchmarks.blindtest.tables import SHORT
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
MEAN = "task_mean"
REPORTED_BY = "reported by"


class SourceRow(BaseModel, frozen=True):
    model: str
    reported_by: str
    cells: dict[str, float]


class SourceFile(published.PublishedFile, frozen=True):
    """published.json as written: a row per model and source, cells by Table 1 column."""
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


def columns() -> list[published.Column]:
    out = [published.Column(t, "Table 1", "", SHORT[t], SHORT[t],
                            f"accuracy on {SHORT[t].lower()} (percent), both prompts")
           for t in PAPER_TASKS]
    out.append(published.Column(MEAN, "Table 1", "", "Task mean", "task mean",
                                "the unweighted mean of the eight tasks (percent)"))
    return out


def table() -> published.PublishedTable:
    data = source()
    rows = [published.Row(r.model, {REPORTED_BY: r.reported_by}, r.cells) for r in data.rows]
    return data.table(columns(), [m.model() for m in data.models], rows,
                      settings=(REPORTED_BY,))


def differences(info: RunInfo, metrics: dict[str, Any], labels: str) -> list[str]:
    options = info.options
    out = []
    if PAPER not in metrics:
        out.append(f"protocol {options.get('protocol')}: the run has no paper-protocol "
                   "metrics; the published numbers are the paper's")
    n = options.get("num_samples")
    if n is not None:
        out.append(f"samples: the first {n} rows of each task; the published: every image")
    out.append("data: the Hub's valid split (its size changed between revisions); the "
               "paper's images were scored with both of its prompts each")
    if not info.generation.temperature:
        out.append("temperature 0: the paper used the APIs' defaults (temperature 1)")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    labels = (metrics.get("labels") or {}).get("sets", ["original"])[0]
    block = (metrics.get(PAPER) or {}).get(labels) or {}
    values = {t: published.run_value((block.get("tasks") or {}).get(t), "accuracy")
              for t in PAPER_TASKS}
    values[MEAN] = published.run_value(block.get(MEAN), "accuracy")
    return published.RunBeside({REPORTED_BY: "this run"},
                               f"the paper's protocol, {labels} labels: each task and the "
                               "task mean", values, tuple(differences(info, metrics, labels)))
