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
