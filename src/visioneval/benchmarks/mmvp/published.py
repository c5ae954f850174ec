"""MMVP's published pair accuracies (`published.json` beside this file: the paper's figure)
and how a run lines up with them: the paper protocol's pair accuracy against the published
labels, and every run setting that differs from the paper's."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.mmvp.spec import PAIRS, REFERENCE
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
COLUMN = "pair_accuracy"


class SourceRow(BaseModel, frozen=True):
    model: str
    pair_accuracy: float


class SourceFile(published.PublishedFile, frozen=True):
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


@cache
def table() -> published.PublishedTable:
    data = source()
    columns = [published.Column(COLUMN, "MMVP, paper protocol", "", "pair accuracy",
                                "MMVP pair accuracy",
                                "share of the 150 pairs whose two questions GPT-4-0314 "
                                "graded correct")]
    rows = [published.Row(r.model, {"protocol": REFERENCE}, {COLUMN: r.pair_accuracy})
            for r in data.rows]
    models = [m.model() for m in data.models]
    return data.table(columns, models, rows, settings=("protocol",))


def differences(info: RunInfo, metrics: dict[str, Any]) -> list[str]:
    options = info.options
    out = []
    blocks = (metrics.get("protocols") or {}).get(REFERENCE)
    if not isinstance(blocks, dict):
        out.append("the run has no paper-protocol metrics; the published numbers are the "
                   "paper protocol's")
    out.append("grading: visioneval's rule-based reading of the answer; the paper asked "
               "GPT-4-0314 (docs/mmvp.md says how they differ)")
    if options.get("pairs"):
        out.append(f"pairs: the first {options['pairs']}; the paper's: all {PAIRS}")
    block = (blocks or {}).get("original") or {}
    if block.get("n_errors"):
        out.append(f"{block['n_errors']} failed requests are left out (their pairs too); "
                   "the paper grades every answer")
    g = info.generation
    if g.temperature != 0.2 or g.max_tokens != 1024:
        out.append(f"decoding: temperature {g.temperature}, at most {g.max_tokens} tokens; "
                   "the paper sampled at temperature 0.2 with at most 1024 new tokens")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    block = ((metrics.get("protocols") or {}).get(REFERENCE) or {}).get("original")
    values = {COLUMN: published.run_value(block, COLUMN)} if isinstance(block, dict) else {}
    return published.RunBeside({"protocol": REFERENCE},
                               "paper protocol, published labels: pair accuracy", values,
                               tuple(differences(info, metrics)))
