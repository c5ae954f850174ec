"""NaturalBench's published numbers (`published.json`): the paper's protocol, where each
harness departs from it, and the paper's table (not shipped: see its notes); how a run lines
up with them."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.naturalbench.spec import METRIC_NAMES, METRICS, PAPER
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")


class SourceRow(BaseModel, frozen=True):
    model: str
    acc: float
    q_acc: float
    i_acc: float
    g_acc: float


class SourceFile(published.PublishedFile, frozen=True):
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


@cache
def table() -> published.PublishedTable:
    data = source()
    columns = [published.Column(m, "the paper's protocol", "", METRIC_NAMES[m],
                                METRIC_NAMES[m], _MEANING[m]) for m in METRICS]
    rows = [published.Row(r.model, {"shots": 0}, {m: getattr(r, m) for m in METRICS})
            for r in data.rows]
    models = [m.model() for m in data.models]
    return data.table(columns, models, rows)


_MEANING = {"acc": "answers right, of 7,600",
            "q_acc": "questions right on both images, of 3,800",
            "i_acc": "images with both questions right, of 3,800",
            "g_acc": "groups with all four answers right, of 1,900"}


def differences(info: RunInfo, metrics: dict[str, Any], protocol: str | None) -> list[str]:
    out = []
    if protocol is None:
        out.append("the run has no protocol's metrics")
    elif protocol != PAPER:
        out.append(f"protocol {protocol}: a space between question and suffix; the paper's "
                   "has none")
    label_sets = metrics.get("label_sets") or []
    if label_sets and label_sets[0] != "original":
        out.append("label set: the answer columns; the paper scores the fixed layout")
    n = info.options.get("num_samples")
    if n is not None:
        out.append(f"samples: the first {n} groups; the paper's: all 1,900")
    block = ((metrics.get("results") or {}).get(label_sets[0] if label_sets else "", {})
             .get(protocol or "", {}))
    if block.get("n_errors"):
        out.append(f"{block['n_errors']} failed requests are left out; the paper scores "
                   "every answer (an empty one as wrong)")
    if info.generation.temperature:
        out.append(f"temperature {info.generation.temperature}: sampled answers")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    protocols = metrics.get("protocols") or []
    protocol = PAPER if PAPER in protocols else (protocols[0] if protocols else None)
    label_sets = metrics.get("label_sets") or ["original"]
    block = ((metrics.get("results") or {}).get(label_sets[0]) or {}).get(protocol or "")
    values = {m: published.run_value(block, m) for m in METRICS} if block else {}
    return published.RunBeside({"shots": 0}, f"{protocol} protocol: the four figures",
                               values, tuple(differences(info, metrics, protocol)))
