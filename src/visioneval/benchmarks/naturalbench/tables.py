"""NaturalBench's tables: the four figures per protocol with their 95% intervals (the main
table a run ends with), the label sets side by side, the image controls against chance,
the layout check, and `results.csv`."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.benchmarks.naturalbench.spec import (
    COUNTS,
    LABEL_SET_NAMES,
    METRIC_NAMES,
    METRICS,
)
from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.harness.differences import DifferenceSummary
from visioneval.harness.differences import show as show_differences
from visioneval.io import csvcells
from visioneval.terminal import line

CSV_HEADER = ["family", "label_set", "protocol", "metric", "value_pct", "ci95_low_pct",
              "ci95_high_pct", "n", "n_errors", "unparsed", "unavailable"]
INTERVALS = ("[95%]: cluster bootstrap over groups (a group's four answers resampled "
             "together), 1000 seeded resamples.")
LEGEND = ("paper: question+suffix, no space (naturalbench_vqa.py:158); lmms-eval and "
          "vlmevalkit: question, a space, the suffix (utils.py:155, image_mcq.py:1407); "
          "all three read answers alike and score the fixed layout.")


def with_interval(value: float | None, span: list[float] | None) -> str:
    """"45.2 [43.0, 47.5]": a figure in percent with its 95% interval."""
    if value is None:
        return "-"
    return f"{pct(value)} [{interval(span, joiner=', ')}]" if span else pct(value)


def figure_row(name: str, block: dict[str, Any]) -> list[str]:
    """A protocol's four figures, G-Acc (the paper's main figure) with its 95% interval."""
    return [name, *(pct(block.get(m), missing="-") for m in METRICS[:3]),
            with_interval(block.get("g_acc"), block.get("g_acc_ci95")),
            str(block.get("n_groups", 0)), str(block.get("n_errors", 0)),
            str(block.get("unparsed", 0))]


HEADER = ["protocol", *(METRIC_NAMES[m] for m in METRICS[:3]), "G-Acc [95%]", "groups",
          "errors", "unread"]


def interval_rows(per: dict[str, Any]) -> list[list[str]]:
    """Every figure of every protocol with its 95% interval and what it counts."""
    rows = []
    for protocol, block in per.items():
        for metric in METRICS:
            value = block.get(metric)
            rows.append([protocol if metric == METRICS[0] else "", METRIC_NAMES[metric],
                         pct(value, missing="-"),
                         interval(block.get(f"{metric}_ci95"), joiner=", ")
                         if value is not None else "-",
                         str(block.get(COUNTS[metric], 0)),
                         str(block.get(f"{metric}_unavailable", "")).split(":")[0]
                         if value is None else ""])
    return rows


def show_main(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Per protocol, the four figures under the first label set; then the other label set,
    the layout check, and why the protocols differ."""
    label_sets = metrics.get("label_sets") or []
    results = metrics.get("results") or {}
    for label_set in label_sets:
        rows = [figure_row(p, b) for p, b in results.get(label_set, {}).items()]
        print_table(console, f"NaturalBench: {model}, {LABEL_SET_NAMES[label_set]} "
                    "(percent; G-Acc is the paper's main figure)", HEADER, rows,
                    INTERVALS + " '-': lmms-eval reports no Acc. unread: answers with "
                    "neither answer word.", numeric_from=1)
    show_layout(metrics, console)
    if metrics.get("differences"):
        console.print()
        show_differences(DifferenceSummary.model_validate(metrics["differences"]), console)


def show_layout(metrics: dict[str, Any], console: Console) -> None:
    layout = metrics.get("layout") or {}
    if not layout.get("groups"):
        return
    text = (f"Answer columns vs the fixed layout: {layout['fixed']} of {layout['groups']} "
            f"groups agree, {layout['breaks']} break it, {layout['unreadable']} unreadable")
    line(console, text)
    if layout.get("breaking_groups"):
        line(console, "  breaking: " + ", ".join(layout["breaking_groups"]))
    difference = metrics.get("label_set_difference") or {}
    for protocol, moves in difference.items():
        if any(abs(v) > 0 for v in moves.values()):
            line(console, f"  {protocol}, answer columns minus fixed layout: " + ", ".join(
                f"{METRIC_NAMES[m]} {pct(v, signed=True)}" for m, v in moves.items()))


def show_controls(metrics: dict[str, Any], console: Console) -> None:
    """Each image control's figures beside chance (independent uniform guesses)."""
    for control, by_label in (metrics.get("controls") or {}).items():
        label_set = next(iter(by_label), None)
        if label_set is None:
            continue
        rows = [figure_row(p, b) for p, b in by_label[label_set].items()]
        print_table(console, f"--variant {control}: the figures with no image "
                    f"({LABEL_SET_NAMES[label_set]}; chance: Acc 50.0, Q-Acc 25.0, I-Acc "
                    "25.0, G-Acc 6.2)", HEADER, rows, INTERVALS, numeric_from=1)


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """Every table (`visioneval show`)."""
    show_main(metrics, model, console)
    console.print()
    for label_set, per in (metrics.get("results") or {}).items():
        print_table(console, f"Every figure with its 95% interval, "
                    f"{LABEL_SET_NAMES[label_set]} (percent)",
                    ["protocol", "figure", "value", "95% interval", "n", "unavailable"],
                    interval_rows(per), INTERVALS + " Why a figure is unavailable: "
                    "metrics.json (<figure>_unavailable).", numeric_from=2)
    show_controls(metrics, console)
    show_types(metrics, console)
    line(console, LEGEND)


def show_types(metrics: dict[str, Any], console: Console) -> None:
    label_sets = metrics.get("label_sets") or []
    if not label_sets:
        return
    rows = []
    for protocol, block in (metrics.get("results") or {}).get(label_sets[0], {}).items():
        for qtype, inner in block.get("per_type", {}).items():
            rows.append([protocol, qtype, *(pct(inner.get(m), missing="-") for m in METRICS),
                         str(inner.get("n_groups", 0))])
    if rows:
        print_table(console, "Per question type (percent)",
                    ["protocol", "type", *(METRIC_NAMES[m] for m in METRICS), "groups"],
                    rows, "", numeric_from=2)


def to_csv(metrics: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csvcells.writer(out)
    writer.writerow(CSV_HEADER)
    families = [("stored", metrics.get("results") or {})]
    families += list((metrics.get("controls") or {}).items())
    for family, by_label in families:
        for label_set, per in by_label.items():
            for protocol, block in per.items():
                for metric in METRICS:
                    span = block.get(f"{metric}_ci95") or [None, None]
                    writer.writerow([
                        family, label_set, protocol, METRIC_NAMES[metric],
                        _cell(block.get(metric)), _cell(span[0]), _cell(span[1]),
                        block.get(COUNTS[metric], ""),
                        block.get("n_errors", 0), block.get("unparsed", 0),
                        block.get(f"{metric}_unavailable", "")])
    return out.getvalue()


def _cell(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def write(metrics: dict[str, Any], directory: Path) -> list[Path]:
    path = directory / "results.csv"
    path.write_text(to_csv(metrics))
    return [path]
