"""BLINK's published numbers (`published.json` beside this file: the authors' README
mini-leaderboard, val and test) and how a run lines up with them: the paper protocol's mean
of the task accuracies on val, and every run setting that differs from the paper's."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.blink.spec import REFERENCE, TASKS
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")


class SourceRow(BaseModel, frozen=True):
    model: str
    val: float
    test: float


class SourceFile(published.PublishedFile, frozen=True):
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


@cache
def table() -> published.PublishedTable:
    data = source()
    columns = [published.Column("val", "BLINK, paper protocol", "", "val (1,901)",
                                "BLINK val", "unweighted mean of the 14 task accuracies"),
               published.Column("test", "BLINK, paper protocol", "", "test (1,907)",
                                "BLINK test", "the same on the hidden test answers (EvalAI)")]
    rows = [published.Row(r.model, {"protocol": REFERENCE}, {"val": r.val, "test": r.test})
            for r in data.rows]
    return data.table(columns, [m.model() for m in data.models], rows, settings=("protocol",))


def differences(info: RunInfo, metrics: dict[str, Any]) -> list[str]:
    options = info.options
    out = []
    blocks = (metrics.get("protocols") or {}).get(REFERENCE)
    if not isinstance(blocks, dict):
        out.append("the run has no paper-protocol metrics; the published numbers are the "
                   "paper protocol's")
    out.append("extraction: analyze_answer's rules only; what they leave was read by "
               "gpt-3.5-turbo in the paper and is scored wrong here")
    if options.get("tasks"):
        out.append(f"tasks: {options['tasks']}; the paper's mean is over all {len(TASKS)}")
    if options.get("limit"):
        out.append(f"the first {options['limit']} questions of each task; the paper's: all")
    block = (blocks or {}).get("original") or {}
    if block.get("n_errors"):
        out.append(f"{block['n_errors']} failed requests are left out; the paper scores "
                   "every answer")
    g = info.generation
    if g.temperature != 0 or g.max_tokens != 1024:
        out.append(f"decoding: temperature {g.temperature}, at most {g.max_tokens} tokens; "
                   "the paper: temperature 0, at most 1024 tokens")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    block = ((metrics.get("protocols") or {}).get(REFERENCE) or {}).get("original")
    values = {"val": published.run_value(block, "macro")} if isinstance(block, dict) else {}
    return published.RunBeside({"protocol": REFERENCE},
                               "paper protocol, published labels: mean of task accuracies "
                               "(val)", values, tuple(differences(info, metrics)))
