"""HallusionBench's published numbers (`published.json` beside this file): the authors' README
leaderboard (the paper's protocol), VLMEvalKit's results file and the authors' 2025
leaderboard, and how a run lines up with them: the paper's protocol beside the first,
VLMEvalKit's beside the others, and every run setting that differs."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.benchmarks.hallusionbench.spec import FULL_QUESTIONS
from visioneval.core import published
from visioneval.core.runfiles import RunInfo

DATA = Path(__file__).with_name("published.json")
# Each published table, the run protocol laid beside it, and its columns.
TABLES = {"paper": ("paper", ("qAcc", "fAcc", "easy", "hard", "aAcc")),
          "vlmevalkit": ("vlmevalkit", ("aAcc", "fAcc", "qAcc")),
          "authors-2025": ("vlmevalkit", ("aAcc", "fAcc", "qAcc", "overall"))}
TITLES = {"paper": "README leaderboard (the paper's protocol, 1,129 questions)",
          "vlmevalkit": "VLMEvalKit results (951 questions)",
          "authors-2025": "the authors' leaderboard.json (2025)"}
MEANINGS = {"qAcc": "question-pair accuracy", "fAcc": "figure accuracy",
            "easy": "question pairs on original figures (or none)",
            "hard": "question pairs on edited figures", "aAcc": "question accuracy",
            "overall": "mean of aAcc, fAcc and qAcc (VLMEvalKit's single number)"}


class SourceRow(BaseModel, frozen=True):
    """A model's numbers, keyed `<table>/<metric>`."""
    model: str
    cells: dict[str, float]


class SourceFile(published.PublishedFile, frozen=True):
    models: list[published.ModelEntry]
    rows: list[SourceRow]


@cache
def source() -> SourceFile:
    return SourceFile.read(DATA)


@cache
def table() -> published.PublishedTable:
    data = source()
    columns = [published.Column(f"{t}/{m}", TITLES[t], "", m, f"{m} ({t})",
                                f"{MEANINGS[m]}, {TITLES[t]}")
               for t, (_, metrics) in TABLES.items() for m in metrics]
    rows = [published.Row(r.model, {}, r.cells) for r in data.rows]
    models = [m.model() for m in data.models]
    return data.table(columns, models, rows, settings=())


def _value(block: dict[str, Any], metric: str) -> published.RunValue:
    if metric == "overall":
        return published.run_value(block.get("mean_of_three"), "value")
    return published.run_value(block.get("overall"), metric)


def differences(info: RunInfo, metrics: dict[str, Any]) -> list[str]:
    blocks = metrics.get("protocols") or {}
    out = []
    if "paper" not in blocks:
        out.append("the run has no paper-protocol metrics: the README's columns are empty")
    paper = blocks.get("paper", {})
    if paper.get("reading") == "rule":
        out.append("the paper's answers were read by visioneval's Yes/No rule, not by the "
                   "GPT-4 grader (give --judge-model to grade them)")
    n = paper.get("n", 0) + paper.get("n_errors", 0)
    if paper and n < FULL_QUESTIONS:
        out.append(f"questions: {n:,} of the paper's {FULL_QUESTIONS:,}")
    errors = paper.get("n_errors", 0)
    if errors:
        out.append(f"{errors} failed requests are left out (with their figures and groups); "
                   "the paper graded every question")
    vlm = blocks.get("vlmevalkit", {})
    if vlm and vlm.get("reading") == "rule" and vlm.get("unclear"):
        out.append(f"vlmevalkit: {vlm['unclear']} answers stayed Unknown (no judge model): "
                   "VLMEvalKit would ask gpt-4o-mini when an OpenAI key works")
    if info.generation.temperature:
        out.append(f"temperature {info.generation.temperature}: sampled answers")
    return out


def beside(info: RunInfo, metrics: dict[str, Any]) -> published.RunBeside:
    blocks = metrics.get("protocols") or {}
    values = {}
    for name, (protocol, columns) in TABLES.items():
        block = blocks.get(protocol)
        if block is not None:
            for metric in columns:
                values[f"{name}/{metric}"] = _value(block, metric)
    return published.RunBeside({},
                               "the paper's protocol beside the README; VLMEvalKit's beside "
                               "VLMEvalKit's results and the 2025 leaderboard", values,
                               tuple(differences(info, metrics)))
