"""BLINK's tables: each protocol's mean over tasks and over questions under each label set,
and the accuracy per task, as `results.csv` and in the terminal."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.blink.spec import (
    LMMS_EVAL_GENERATION,
    PAPER_GENERATION,
    TASKS,
    VLMEVALKIT_GENERATION,
)
from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.harness.differences import DifferenceSummary
from visioneval.harness.differences import show as show_differences
from visioneval.io import csvcells
from visioneval.terminal import line

# Which of the two means each harness reports as its headline ([P] evaluate.py "Total";
# [L] the blink group's blink_acc; [V] report_acc's "Overall").
HEADLINE = {"paper": "macro", "lmms-eval": "macro", "vlmevalkit": "micro",
            "paper+judge": "macro", "vlmevalkit+judge": "micro"}
LABEL_NAMES = {"original": "published", "corrected": "corrected"}
CSV_HEADER = ["protocol", "labels", "task", "accuracy_pct", "ci95_low_pct", "ci95_high_pct",
              "questions", "errors"]


def rows(metrics: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for protocol, blocks in metrics.get("protocols", {}).items():
        for label_set in ("original", "corrected"):
            if isinstance(blocks.get(label_set), dict):
                yield protocol, label_set, blocks[label_set]


def _bounds(found: list[float] | None) -> tuple[str, str]:
    return ("", "") if not found else (pct(found[0]), pct(found[1]))


def to_csv(metrics: dict[str, Any]) -> str:
    buf = io.StringIO()
    out = csvcells.writer(buf, lineterminator="\n")
    out.writerow(CSV_HEADER)
    for protocol, label_set, b in rows(metrics):
        for key, name in (("macro", "mean of tasks"), ("micro", "all questions")):
            out.writerow([protocol, label_set, name, pct(b.get(key)),
                          *_bounds(b.get(f"{key}_ci95")), b["n"], b["n_errors"]])
        for task, cell in (b.get("per_task") or {}).items():
            out.writerow([protocol, label_set, task, pct(cell["accuracy"]), "", "",
                          cell["n"], ""])
    return buf.getvalue()


def write_csv(metrics: dict[str, Any], directory: Path) -> Path:
    path = directory / "results.csv"
    path.write_text(to_csv(metrics))
    return path


def with_interval(value: float | None, span: list[float] | None) -> str:
    if value is None:
        return "-"
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def main_rows(metrics: dict[str, Any]) -> list[list[str]]:
    out, previous = [], None
    protocols = metrics.get("protocols", {})
    for protocol, label_set, b in rows(metrics):
        unread = sum(protocols[protocol].get("unparsed", {}).values())
        first = protocol != previous
        out.append([protocol if first else "", LABEL_NAMES[label_set],
                    with_interval(b.get("macro"), b.get("macro_ci95")),
                    with_interval(b.get("micro"), b.get("micro_ci95")),
                    HEADLINE.get(protocol, ""), str(b["n"]), str(b["n_errors"]),
                    str(unread) if first else ""])
        previous = protocol
    return out


HEADER = ["protocol", "labels", "tasks [95%]", "questions [95%]", "reports", "n", "errors",
          "unread"]
NOTE = ("tasks: unweighted mean of the task accuracies (the paper's Total, lmms-eval's "
        "blink); questions: mean over every question (VLMEvalKit's Overall); reports: the "
        "one each harness prints. [95%]: bootstrap, 1000 seeded resamples.")


def judge_lines(metrics: dict[str, Any]) -> list[str]:
    """What each judged reading's judge did; a failed request is an error there."""
    out = []
    for key, block in (metrics.get("protocols") or {}).items():
        done = block.get("judge")
        if isinstance(done, dict):
            out.append(f"{key}: judge asked about {done.get('asked', 0)} answers the rules "
                       f"left; read {done.get('read', 0)}, no option "
                       f"{done.get('no_option', 0)}, random pick {done.get('random', 0)}, "
                       f"failed {done.get('failed', 0)} (errors)")
    return out


def task_rows(metrics: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    blocks = [(p, b.get("per_task") or {}) for p, s, b in rows(metrics) if s == "original"]
    header = ["task", "n"] + [p for p, _ in blocks]
    found = []
    for task in TASKS:
        cells = [c.get(task) for _, c in blocks]
        if not any(cells):
            continue
        n = next(c["n"] for c in cells if c)
        found.append([task, str(n)] + [pct(c["accuracy"]) if c else "-" for c in cells])
    return header, found


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    print_table(console, f"BLINK (val): {model}, accuracy (percent)", HEADER,
                main_rows(metrics), NOTE, numeric_from=2)
    for protocol, how in (metrics.get("readings") or {}).items():
        line(console, f"  {protocol} read by {how}")
    for text in judge_lines(metrics):
        line(console, f"  {text}")
    summary = metrics.get("differences")
    if summary:
        console.print()
        show_differences(DifferenceSummary.model_validate(summary), console)


def show(metrics: dict[str, Any], model: str, console: Console,
         generation: dict[str, Any] | None = None) -> None:
    show_main(metrics, model, console)
    header, found = task_rows(metrics)
    if found:
        console.print()
        print_table(console, "Per task, published labels (percent)", header, found,
                    numeric_from=1)
    unread = unread_rows(metrics)
    if unread:
        console.print()
        print_table(console, "Answers a protocol could not read (scored wrong)",
                    ["protocol", "why", "answers"], unread, numeric_from=2)
    if generation is not None:
        show_generation(generation, console)


def unread_rows(metrics: dict[str, Any]) -> list[list[str]]:
    return [[p, why, str(n)] for p, b in metrics.get("protocols", {}).items()
            for why, n in b.get("unparsed", {}).items()]


def generation_lines(generation: dict[str, Any]) -> list[str]:
    temperature, tokens = generation.get("temperature"), generation.get("max_tokens")
    return [f"this run: temperature {temperature}, at most {tokens} tokens, for every prompt",
            f"paper: {PAPER_GENERATION}", f"lmms-eval: {LMMS_EVAL_GENERATION}",
            f"vlmevalkit: {VLMEVALKIT_GENERATION}"]


def show_generation(generation: dict[str, Any], console: Console) -> None:
    console.print()
    line(console, "Generation", style="bold")
    for text in generation_lines(generation):
        line(console, f"  {text}")
