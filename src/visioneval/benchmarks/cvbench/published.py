"""CV-Bench's published numbers (`published.json`): the paper's protocol, where each harness
departs from it, and the paper's table (not shipped: see its notes); how a run lines up."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.cvbench.spec import ITEMS, PAPER
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
FIGURES = ("overall_2d", "overall_3d", "cv_bench")
NAMES = {"overall_2d": "CV-Bench 2D", "overall_3d": "CV-Bench 3D", "cv_bench": "CV-Bench"}
_MEANING = {"overall_2d": "mean of the ADE20K and COCO accuracies",
            "overall_3d": "accuracy over the Omni3D items",
            "cv_bench": "mean of 2D and 3D"}


class SourceRow(BaseModel, frozen=True):
    model: str
    overall_2d: float
    overall_3d: float
    cv_bench: float | None = None


class SourceFile(published.PublishedFile, frozen=True):
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


@cache
def table() -> published.PublishedTable:
    data = source()
    columns = [published.Column(f, "the paper's protocol", "", NAMES[f], NAMES[f],
                                _MEANING[f]) for f in FIGURES]
    rows = [published.Row(r.model, {"shots": 0},
                          {f: getattr(r, f) for f in FIGURES if getattr(r, f) is not None})
            for r in data.rows]
    return data.table(columns, [m.model() for m in data.models], rows)


def differences(info: RunInfo, metrics: dict[str, Any], protocol: str | None) -> list[str]:
    out = []
    if protocol is None:
        out.append("the run has no protocol's metrics")
    elif protocol != PAPER:
        out.append(f"protocol {protocol}: its own prompt and extraction, not the paper's")
    label_sets = metrics.get("label_sets") or []
    if label_sets and label_sets[0] != "original":
        out.append("label set: corrected; the paper scores the published labels")
    n = info.options.get("num_samples")
    if n is not None:
        out.append(f"samples: the first {n} items; the paper's: all {ITEMS:,}")
    block = ((metrics.get("results") or {}).get(label_sets[0] if label_sets else "", {})
             .get(protocol or "", {}))
    if block.get("n_errors"):
        out.append(f"{block['n_errors']} failed requests are left out; the paper scores "
                   "every item")
    if info.generation.temperature:
        out.append(f"temperature {info.generation.temperature}: the paper decodes greedily")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    protocols = metrics.get("protocols") or []
    protocol = PAPER if PAPER in protocols else (protocols[0] if protocols else None)
    label_sets = metrics.get("label_sets") or ["original"]
    block = ((metrics.get("results") or {}).get(label_sets[0]) or {}).get(protocol or "")
    values = {f: published.run_value(block, f) for f in FIGURES} if block else {}
    return published.RunBeside({"shots": 0}, f"{protocol} protocol: 2D, 3D and CV-Bench",
                               values, tuple(differences(info, metrics, protocol)))
