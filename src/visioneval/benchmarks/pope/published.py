"""POPE's published numbers (`published.json` beside this file) and how a run lines up with
them: the paper's protocol per setting (accuracy, precision, recall, F1, yes ratio) and the
mean F1 of the three settings, with every run setting that differs from theirs."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.pope.spec import PAPER, SETTINGS
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
METRICS = {"accuracy": "accuracy", "precision": "precision", "recall": "recall",
           "f1": "F1", "yes_ratio": "yes ratio"}
MEAN_F1 = "mean_f1"
REPORTED_BY = "reported by"


class SourceRow(BaseModel, frozen=True):
    model: str
    reported_by: str
    cells: dict[str, float]
    cell_notes: dict[str, str] = {}


class SourceFile(published.PublishedFile, frozen=True):
    """published.json as written: a row per model and source, cells `<setting>/<metric>`
    and `mean_f1`."""
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


def columns() -> list[published.Column]:
    out = [published.Column(f"{s}/{m}", f"COCO {s}", "", name, f"{s} {name}",
                            f"{name} on the {s} setting, the paper's reading (percent)")
           for s in SETTINGS for m, name in METRICS.items()]
    out.append(published.Column(MEAN_F1, "LLaVA-1.5's summary", "", "mean F1",
                                "mean F1 of 3 settings", "the mean of the three settings' F1 "
                                "(LLaVA-1.5's one POPE number, not the paper's)"))
    return out


def table() -> published.PublishedTable:
    data = source()
    rows = [published.Row(r.model, {REPORTED_BY: r.reported_by}, r.cells, r.cell_notes)
            for r in data.rows]
    models = [m.model() for m in data.models]
    return data.table(columns(), models, rows, settings=(REPORTED_BY,))


def differences(info: RunInfo, metrics: dict[str, Any], labels: str) -> list[str]:
    """Each run setting that differs from the published numbers' protocol."""
    options = info.options
    out = []
    if PAPER not in metrics:
        out.append(f"protocol {options.get('protocol')}: the run has no paper-protocol "
                   "metrics; the published numbers use the paper's reading")
    if labels != "original":
        out.append("labels: RePOPE's corrected labels; the published numbers use the "
                   "original ones")
    n = options.get("num_samples")
    if n is not None:
        out.append(f"samples: the first {n} questions of each setting; the published: "
                   "every question")
    out.append("random: the run reads the 3,000-question file; LLaVA-1.5's numbers were "
               "measured on the 2,910-question one (90 'no' questions fewer)")
    if info.generation.temperature:
        out.append(f"temperature {info.generation.temperature}: sampled answers; LLaVA-1.5 "
                   "decoded greedily")
    block = (metrics.get(PAPER) or {}).get(labels) or {}
    errors = sum((b or {}).get("n_errors", 0) for b in (block.get("settings") or {}).values())
    if errors:
        out.append(f"{errors} failed requests are left out; the published numbers score "
                   "every question")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    labels = (metrics.get("labels") or {}).get("sets", ["original"])[0]
    block = (metrics.get(PAPER) or {}).get(labels) or {}
    values = {}
    for setting, found in (block.get("settings") or {}).items():
        for metric in METRICS:
            values[f"{setting}/{metric}"] = published.run_value(found, metric)
    if block.get(MEAN_F1):
        values[MEAN_F1] = published.run_value(block[MEAN_F1], "f1")
    return published.RunBeside({REPORTED_BY: "this run"},
                               f"the paper's protocol, {labels} labels: each setting and the "
                               "mean F1", values, tuple(differences(info, metrics, labels)))
