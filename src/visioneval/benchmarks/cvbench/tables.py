"""CV-Bench's tables: every figure per protocol (the main table a run ends with), per task,
the image controls against chance, and `results.csv`."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.cvbench.spec import SOURCES, TASKS
from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.harness.differences import DifferenceSummary
from visioneval.harness.differences import show as show_differences
from visioneval.io import csvcells
from visioneval.terminal import line

HEADER = ["protocol", "CV-Bench [95%]", "2D", "3D", *SOURCES, "all items", "n", "errors",
          "unread"]
NOTE = ("CV-Bench = (2D + 3D) / 2, the paper's score; 2D = mean of ADE20K and COCO "
        "(VLMEvalKit's CV-Bench-2D Overall); 3D = Omni3D; 'all items': the mean over "
        "items, which lmms-eval reports. [95%]: cluster bootstrap over images, 1000 "
        "resamples. unread: no option letter read (wrong).")
REPORTS = ("Each reports: paper, CV-Bench and each source (eval/eval/*/*_test.py); "
           "lmms-eval, 'all items' (cv_bench/utils.py:55-64); VLMEvalKit, 2D and 3D "
           "apart, no CV-Bench (image_mcq.py:1270-1298).")
LABEL_NAMES = {"original": "published labels", "corrected": "corrected labels"}
CSV_HEADER = ["family", "label_set", "protocol", "figure", "value_pct", "ci95_low_pct",
              "ci95_high_pct", "n", "n_errors", "unparsed"]


def with_interval(value: float | None, span: list[float] | None) -> str:
    if value is None:
        return "-"
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def row(protocol: str, block: dict[str, Any]) -> list[str]:
    sources = block.get("per_source") or {}
    return [protocol, with_interval(block.get("cv_bench"), block.get("cv_bench_ci95")),
            pct(block.get("overall_2d"), missing="-"), pct(block.get("overall_3d"),
                                                            missing="-"),
            *(pct((sources.get(s) or {}).get("accuracy"), missing="-") for s in SOURCES),
            pct(block.get("accuracy"), missing="-"), str(block.get("n", 0)),
            str(block.get("n_errors", 0)), str(block.get("unparsed", 0))]


def judge_line(metrics: dict[str, Any]) -> str | None:
    """What VLMEvalKit's judge did (its reading is the `vlmevalkit+judge` row)."""
    done = metrics.get("judge")
    if not isinstance(done, dict):
        return None
    return (f"{done.get('reading')}: VLMEvalKit's rules, then its matching prompt asked of "
            f"{done.get('model')} about the {done.get('asked', 0)} answers they left; read "
            f"{done.get('read', 0)}, Z {done.get('no_option', 0)}, random pick "
            f"{done.get('random', 0)}, failed {done.get('failed', 0)} (errors).")


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Per protocol, every figure under each label set; then why the protocols differ."""
    results = metrics.get("results") or {}
    for label_set in metrics.get("label_sets") or []:
        rows = [row(p, b) for p, b in results.get(label_set, {}).items()]
        print_table(console, f"CV-Bench: {model}, {LABEL_NAMES[label_set]} (percent)",
                    HEADER, rows, NOTE, numeric_from=1)
    line(console, REPORTS)
    judged = judge_line(metrics)
    if judged:
        line(console, judged)
    for protocol, moves in (metrics.get("label_set_difference") or {}).items():
        if any(abs(v) > 0 for v in moves.values()):
            line(console, f"{protocol}, corrected minus published labels: " + ", ".join(
                f"{k} {pct(v, signed=True)}" for k, v in moves.items()))
    if metrics.get("differences"):
        console.print()
        show_differences(DifferenceSummary.model_validate(metrics["differences"]), console)


def task_rows(metrics: dict[str, Any]) -> list[list[str]]:
    label_sets = metrics.get("label_sets") or []
    if not label_sets:
        return []
    out = []
    for protocol, block in (metrics.get("results") or {}).get(label_sets[0], {}).items():
        tasks = block.get("per_task") or {}
        out.append([protocol, *(pct((tasks.get(t) or {}).get("accuracy"), missing="-")
                                for t in TASKS), pct(block.get("chance"), missing="-")])
    return out


TASK_HEADER = ["protocol", *TASKS, "chance"]


def control_rows(metrics: dict[str, Any]) -> list[list[str]]:
    out = []
    for control, by_label in (metrics.get("controls") or {}).items():
        label_set = next(iter(by_label), None)
        if label_set is None:
            continue
        for protocol, block in by_label[label_set].items():
            out.append([control, *row(protocol, block), pct(block.get("chance"),
                                                            missing="-")])
    return out


CONTROL_HEADER = ["variant", *HEADER, "chance"]


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Every table (`visioneval show`)."""
    show_main(metrics, model, console)
    rows = task_rows(metrics)
    if rows:
        console.print()
        print_table(console, "Per task (percent)", TASK_HEADER, rows,
                    "chance: the mean of 1/(number of options) over the items.")
    controls = control_rows(metrics)
    if controls:
        console.print()
        print_table(console, "Without the image (percent)", CONTROL_HEADER, controls,
                    "Against chance: the mean of 1/(number of options).", numeric_from=2)


def to_csv(metrics: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csvcells.writer(out)
    writer.writerow(CSV_HEADER)
    families = [("stored", metrics.get("results") or {})]
    families += list((metrics.get("controls") or {}).items())
    for family, by_label in families:
        for label_set, per in by_label.items():
            for protocol, block in per.items():
                figures = [(k, block.get(k), block.get(f"{k}_ci95"), block.get("n"))
                           for k in ("cv_bench", "overall_2d", "overall_3d", "accuracy",
                                     "accuracy_2d", "accuracy_3d")]
                for name, kind in (("per_source", "source"), ("per_task", "task")):
                    figures += [(f"{kind} {k}", c.get("accuracy"), None, c.get("n"))
                                for k, c in (block.get(name) or {}).items()]
                for name, value, span, n in figures:
                    if value is None:
                        continue
                    low, high = span or (None, None)
                    writer.writerow([family, label_set, protocol, name, _cell(value),
                                     _cell(low), _cell(high), n, block.get("n_errors", 0),
                                     block.get("unparsed", 0)])
    return out.getvalue()


def _cell(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def write(metrics: dict[str, Any], directory: Path) -> list[Path]:
    path = directory / "results.csv"
    path.write_text(to_csv(metrics))
    return [path]
