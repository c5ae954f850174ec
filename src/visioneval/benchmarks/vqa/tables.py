"""The results table: one row per group and one overall, with accuracy's 95% interval, as a
CSV beside metrics.json and as the table a run ends with."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from visioneval.core.printed import print_table
from visioneval.fmt import interval, pct
from visioneval.io import csvcells

HEADER = ["model", "group", "n", "errors", "unparsed", "ambiguous", "accuracy"]
SET_HEADER = ["exact_match", "macro_f1", "sample_f1"]
INTERVAL_HEADER = ["accuracy_ci95_low", "accuracy_ci95_high"]  # last: older columns stay put


def blocks(metrics: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, block) per group, then overall; a single group is the overall row alone."""
    groups = list(metrics.get("groups", {}).items())
    overall = ("overall", metrics.get("overall", {}))
    return [*groups, overall] if len(groups) > 1 else [overall]


def rows(metrics: dict[str, Any], model: str) -> list[list[str]]:
    """The CSV's rows, header first; metrics in percent, one decimal, empty when absent."""
    extra = SET_HEADER if metrics.get("scorer") == "set" else []
    out = [HEADER + extra + INTERVAL_HEADER]
    for name, b in blocks(metrics):
        low, high = b.get("accuracy_ci95") or (None, None)
        out.append([model, name, str(b.get("n", 0)), str(b.get("n_errors", 0)),
                    str(b.get("n_unparsed", 0)), str(b.get("n_ambiguous", 0)),
                    pct(b.get("accuracy")), *(pct(b.get(k)) for k in extra), pct(low),
                    pct(high)])
    return out


def write(metrics: dict[str, Any], model: str, directory: Path) -> Path:
    buf = io.StringIO()
    csvcells.writer(buf, lineterminator="\n").writerows(rows(metrics, model))
    path = directory / "results.csv"
    path.write_text(buf.getvalue())
    return path


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """The table a run ends with: accuracy and its 95% interval per group (percent)."""
    scorer = metrics.get("scorer", "?")
    columns = ["group", "n", "errors", "unparsed", "accuracy [95%]"]
    if scorer == "set":
        columns += ["macro F1"]
    found = []
    for name, b in blocks(metrics):
        unparsed = str(b.get("n_unparsed", 0))
        if b.get("n_ambiguous"):
            unparsed += f" ({b['n_ambiguous']} ambiguous)"
        accuracy = pct(b.get("accuracy"), missing="-")
        if b.get("accuracy_ci95"):
            accuracy += f" [{interval(b['accuracy_ci95'], joiner=', ')}]"
        cells = [name, str(b.get("n", 0)), str(b.get("n_errors", 0)), unparsed, accuracy]
        if scorer == "set":
            cells.append(pct(b.get("macro_f1"), missing="-"))
        found.append(cells)
    print_table(console, f"vqa: {model}, {scorer} scorer (percent)", columns, found,
                "Unparsed answers count as wrong. [95%]: bootstrap over samples, 1000 seeded "
                "resamples.")
