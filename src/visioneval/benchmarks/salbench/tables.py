"""Paper-style tables: the seed's Table 1 shape (macro F1, percent, one decimal) and the same
layout for exact match, plus the terminal view with both parsers side by side."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from visioneval.benchmarks.salbench.metrics import NO_DIFFICULTY
from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.fmt import pct

# Column -> config, in the seed's order (salbench-eval-plan.md, "Output Format").
TABLE1_COLUMNS = {
    "Detection_NAT": "O3", "Detection_SYN": "P3",
    "Referring_NAT": "O3_box", "Referring_SYN": "P3_box",
    "VisualRef_NAT": "O3_box_img", "VisualRef_SYN": "P3_box_img",
}
HEADLINE_PARSER = "strict"


def percent(block: dict[str, Any] | None, metric: str) -> str:
    """A cell: the metric in percent with one decimal, or empty when it was not computed."""
    return pct((block or {}).get(metric))


def table_rows(metrics: dict[str, Any], label: dict[str, Any], metric: str,
               parser: str = HEADLINE_PARSER) -> list[list[str]]:
    header = ["Model", "Shot", *TABLE1_COLUMNS]
    cells = [percent(metrics.get(cfg, {}).get(parser), metric) for cfg in TABLE1_COLUMNS.values()]
    return [header, [str(label["model"]), str(label["shots"]), *cells]]


def to_csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def write(metrics: dict[str, Any], label: dict[str, Any], directory: Path) -> list[Path]:
    out = []
    for name, metric in (("table1.csv", "macro_f1"), ("table1_exact_match.csv", "exact_match")):
        path = directory / name
        path.write_text(to_csv(table_rows(metrics, label, metric)))
        out.append(path)
    return out


SHORT_TASK = {"D": "Detection", "R": "Referring", "VR": "Visual Ref."}


def show(metrics: dict[str, Any], label: dict[str, Any], console: Console) -> None:
    """One row per config: task and image set, counts, then EM and macro F1 per parser."""
    table = Table(title=f"SalBench: {label['model']}, {label['shots']}-shot (percent)",
                  caption="P3 synthetic, O3 natural. EM exact match; F1 the paper's macro F1. "
                          "strict: the reference parser (headline); lenient: forgives format.",
                  pad_edge=False, box=box.SIMPLE_HEAVY, collapse_padding=True)  # fits 80 columns
    for column in ("task", "set", "n", "errors", "unparsed", "EM\nstrict", "F1\nstrict",
                   "EM\nlenient", "F1\nlenient"):
        table.add_column(column, justify="left" if column in ("task", "set") else "right",
                         no_wrap=True, min_width=5 if column.startswith(("EM", "F1")) else None)
    for config, block in metrics.items():
        spec = CONFIGS[config]
        strict, lenient = block["strict"], block["lenient"]
        table.add_row(SHORT_TASK[spec.task], spec.dataset, str(strict["n"]),
                      str(strict["n_errors"]), str(strict["n_unparsed"]),
                      percent(strict, "exact_match") or "-", percent(strict, "macro_f1") or "-",
                      percent(lenient, "exact_match") or "-",
                      percent(lenient, "macro_f1") or "-")
    console.print(table)
    console.print(protocol_table(metrics))
    levels = difficulty_rows(metrics)
    if levels:
        console.print(_simple("SalBench by difficulty (strict parser, percent)",
                              ["config", "difficulty", "n", "errors", "EM", "F1"], levels))
    else:
        console.print("By difficulty: not available: " + NO_DIFFICULTY + ".", highlight=False,
                      soft_wrap=True)


PROTOCOL_COLUMNS = {
    "headline_macro_f1": "headline F1",
    "lenient_macro_f1": "lenient F1",
    "sample_f1": "sample F1",
    "lmms_eval_o3_3class_f1": "lmms-eval O3 3-class F1",
}
PROTOCOL_NOTE = ("The same answers scored four ways. headline: strict parser, macro F1 over "
                 "every class (the paper's F1 Overall); lenient: forgiving parser; sample F1: "
                 "per-sample set F1 averaged (the seed plan's and lmms-eval's sample_f1, not "
                 "the paper's); lmms-eval O3 3-class: lmms-eval main averages O3's per-class "
                 "F1 over orientation, color and size only (a bug since PR #744), so its O3 "
                 "numbers are not the paper's.")


def protocol_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for config, block in metrics.items():
        view = block.get("protocols") or {}
        rows.append([config, *[pct(view.get(key)) or "-" for key in PROTOCOL_COLUMNS]])
    return rows


def protocol_table(metrics: dict[str, Any]) -> Table:
    return _simple("Why published numbers differ: the same answers, four ways (percent)",
                   ["config", *PROTOCOL_COLUMNS.values()], protocol_rows(metrics),
                   caption="headline = the paper's F1; sample F1 is not the paper's; "
                           "lmms-eval O3 averages 3 of 7 classes (docs/salbench.md)")


def difficulty_rows(metrics: dict[str, Any]) -> list[list[str]]:
    rows = []
    for config, block in metrics.items():
        for level, scores in (block.get("by_difficulty") or {}).items():
            rows.append([config, level, str(scores["n"]), str(scores["n_errors"]),
                         percent(scores, "exact_match") or "-",
                         percent(scores, "macro_f1") or "-"])
    return rows


def _simple(title: str, header: list[str], rows: list[list[str]],
            caption: str | None = None) -> Table:
    table = Table(title=title, caption=caption, pad_edge=False, box=box.SIMPLE_HEAVY,
                  collapse_padding=True)
    for i, column in enumerate(header):
        table.add_column(column, justify="left" if i == 0 or column == "difficulty"
                         else "right")
    for row in rows:
        table.add_row(*row)
    return table
