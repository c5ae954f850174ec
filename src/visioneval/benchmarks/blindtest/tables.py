"""BlindTest's tables: the paper's Table 1 reading first, then lmms-eval's and VLMEvalKit's
reading of their own answers, why they differ; in the terminal (within 100 columns), as
`results.csv` (every protocol, label set and task) and `protocols.csv` (every item a
protocol scores differently, and the cause)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.blindtest import threshold_tables
from visioneval.benchmarks.blindtest.options import BlindTestOptions
from visioneval.benchmarks.blindtest.spec import (
    LMMS,
    PAPER,
    PAPER_TASKS,
    PROTOCOLS,
    TASKS,
    VLMEVALKIT,
)
from visioneval.core.blocks import Note, Section, Table
from visioneval.core.printed import print_table
from visioneval.core.store import RunStore
from visioneval.fmt import interval, pct
from visioneval.harness import differences
from visioneval.harness.differences import DifferenceSummary
from visioneval.io import csvcells

NAMES = {PAPER: "paper", LMMS: "lmms-eval", VLMEVALKIT: "VLMEvalKit"}
SHORT = {"Line Plot Intersections": "Line intersections", "Touching Circles": "Two circles",
         "Circled Letter": "Circled letter", "Olympic Counting - Circles": "Olympic circles",
         "Olympic Counting - Pentagons": "Olympic pentagons", "Nested Squares":
         "Nested squares", "Counting Grid": "Grid rows and columns",
         "Counting Grid - Blank Grids": "Grid (blank)", "Counting Grid - Word Grids":
         "Grid (words)", "Subway Connections": "Subway paths"}
INTERVALS = ("[95%]: bootstrap over items, 1000 seeded resamples. Percent. unread: answers "
             "the protocol could not read (scored wrong).")
CSV_HEADER = ["protocol", "labels", "scope", "n", "n_errors", "unparsed", "correct",
              "accuracy", "ci_low", "ci_high"]


def first_labels(metrics: dict[str, Any]) -> str:
    return ((metrics.get("labels") or {}).get("sets") or ["original"])[0]


def with_interval(block: dict[str, Any], key: str = "accuracy") -> str:
    value = block.get(key)
    if value is None:
        return "-"
    ci = block.get(f"{key}_ci95")
    return f"{pct(value)} [{interval(ci, joiner=', ')}]" if ci else pct(value)


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    """The paper's Table 1 row (and each harness's reading of its own answers beside)."""
    labels = first_labels(metrics)
    present = [p for p in PROTOCOLS if isinstance((metrics.get(p) or {}).get(labels), dict)]
    if not present:
        return
    header = ["Task", *(NAMES[p] for p in present)]
    rows = []
    for task in PAPER_TASKS:
        cells = []
        for p in present:
            block = metrics[p][labels]
            scope = block.get("tasks") or {}
            cell = scope.get(task)
            if cell is None and p == VLMEVALKIT:
                parts = [block["subtasks"][t] for t in TASKS
                         if t in block["subtasks"] and (t == task or
                                                        (task == "Counting Grid" and
                                                         t.startswith("Counting Grid")))]
                cells.append(" / ".join(pct(c.get("accuracy"), missing="-") for c in parts)
                             or "-")
                continue
            cells.append(with_interval(cell or {}))
        if any(c != "-" for c in cells):
            rows.append([SHORT.get(task, task), *cells])
    rows.append(["Task mean", *(with_interval(metrics[p][labels].get("task_mean") or {})
                                if p != VLMEVALKIT else "(none)" for p in present)])
    rows.append(["Rows (micro)", *(with_interval(metrics[p][labels].get("accuracy") or {})
                                   if p != VLMEVALKIT else "(none)" for p in present)])
    if LMMS in present:
        lmms = metrics[LMMS][labels]
        value = lmms.get("lmms_task_mean")
        rows.append(["lmms task_mean", *("-" if p != LMMS else pct(value, missing="-")
                                         for p in present)])
    print_table(console, f"BlindTest: {model} (accuracy per task, {labels} labels)", header,
                rows, note=INTERVALS + " VLMEvalKit's grid: blank / words.")
    unread = {p: (metrics[p][labels].get("accuracy") or {}).get("unparsed") for p in present
              if p != VLMEVALKIT}
    said = ", ".join(f"{NAMES[p]} {n}" for p, n in unread.items() if n is not None)
    if said:
        console.print(f"unread answers: {said}", style="dim")
    threshold_tables.show(metrics, labels, console)
    summary = metrics.get("differences")
    if isinstance(summary, dict):
        differences.show(DifferenceSummary.model_validate(summary), console)


def main_rows(metrics: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The report's table: accuracy per task and protocol (percent, with intervals)."""
    labels = first_labels(metrics)
    present = [p for p in PROTOCOLS if isinstance((metrics.get(p) or {}).get(labels), dict)]
    header = ["Task", *(NAMES[p] for p in present)]
    rows = []
    grids = [t for t in TASKS if t not in PAPER_TASKS]
    for task in (*PAPER_TASKS, *grids):
        cells = []
        for p in present:
            block = metrics[p][labels]
            scope = "tasks" if task in PAPER_TASKS and p != VLMEVALKIT else "subtasks"
            cells.append(with_interval((block.get(scope) or {}).get(task) or {}))
        if any(c != "-" for c in cells):
            rows.append([SHORT.get(task, task), *cells])
    rows.append(["Task mean", *(with_interval(metrics[p][labels].get("task_mean") or {})
                                for p in present)])
    return header, rows


def sections(metrics: dict[str, Any]) -> list[Section]:
    header, rows = main_rows(metrics)
    out = [Section("Accuracy per task", [Table(header, rows), Note(INTERVALS)])]
    gaps = gap_rows(metrics)
    if gaps:
        out.append(Section("Two circles: accuracy by gap (paper's reading)", [
            Table(["distance (diameters)", "n", "accuracy [95%]"], gaps),
            Note(GAP_NOTE)]))
    fitted = threshold_tables.section(metrics, first_labels(metrics))
    if fitted is not None:
        out.append(fitted)
    summary = metrics.get("differences")
    if isinstance(summary, dict):
        out.append(differences.section(DifferenceSummary.model_validate(summary)))
    return out


GAP_NOTE = ("The gap between the circles over their diameter (negative: overlapping, 0: "
            "touching). Accuracy should rise from chance (50%) as the gap leaves 0; the gap "
            "where it reaches 75% is the model's threshold (Thresholds, below). [95%]: "
            "Wilson interval.")


def gap_rows(metrics: dict[str, Any]) -> list[list[str]]:
    """Accuracy per gap value of the circles, from the paper protocol's parameters."""
    labels = first_labels(metrics)
    block = (metrics.get(PAPER) or {}).get(labels) or {}
    values = ((block.get("parameters") or {}).get("Touching Circles") or {}).get("distance")
    if not isinstance(values, dict):
        return []
    return [[value, str(cell["n"]), with_interval(cell)] for value, cell in values.items()]


def csv_rows(metrics: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for protocol in PROTOCOLS:
        for labels, block in (metrics.get(protocol) or {}).items():
            scopes = [("all rows", block.get("accuracy")), ("task mean", block.get(
                "task_mean"))] + [(t, b) for t, b in (block.get("tasks") or {}).items()
                                  if t not in TASKS] + list((block.get("subtasks") or
                                                             {}).items())
            for scope, b in scopes:
                if not isinstance(b, dict):
                    continue
                ci = b.get("accuracy_ci95") or [None, None]
                rows.append([protocol, labels, scope, b.get("n"), b.get("n_errors"),
                             b.get("unparsed"), b.get("correct"), b.get("accuracy"), *ci])
    return rows


def write(metrics: dict[str, Any], options: BlindTestOptions, directory: Path) -> list[Path]:
    """results.csv and, with the paper and another protocol, protocols.csv (from the run's
    journal)."""
    buf = io.StringIO()
    out = csvcells.writer(buf, lineterminator="\n")
    out.writerow(CSV_HEADER)
    out.writerows(csv_rows(metrics))
    results = directory / "results.csv"
    results.write_text(buf.getvalue())
    written = [results]
    if metrics.get("differences") and (directory / "samples.jsonl").exists():
        records = RunStore.open(directory).iter_latest()
        written.append(differences.write_run_csv(records, PAPER, options.protocols,
                                                 directory / "protocols.csv"))
    return written
