"""`visioneval runs [DIR]`: every run under a folder in a table (newest first), and the same
as DIR/runs.html."""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.report.runlist import RunEntry, entries

WIDTH = 100
STYLES = {"finished": "green", "errors": "yellow", "stopped": "yellow",
          "interrupted": "yellow", "running": "bold blue", "broken": "red"}


COLUMNS = ("started", "run", "benchmark\nmodel", "status", "main number",
           "value\n95% interval", "n")
NUMBERS = ("value\n95% interval", "n")
CAPPED = {"status": 14, "benchmark\nmodel": 20, "value\n95% interval": 12}
"""Columns kept at most this wide (their text wraps)."""
SHARED = {"run": 0.4}
"""Columns that share what the others leave (at most this share of it); the main number,
whose reasons are the longest text, has the rest."""


def table(found: list[RunEntry], width: int = WIDTH) -> Table:
    """The runs as a table of at most `width` columns: the short columns keep their width,
    the run's folder and the main number share the rest and wrap; a missing number's reason
    (or a broken run's) sits under its label, dimmed, the model under the benchmark and the
    interval under the value."""
    rows = [_cells(entry) for entry in found]
    widths = {column: min(max([*map(len, column.split("\n")),
                               *(len(line) for r in rows for line in r[k].plain.split("\n"))]),
                          CAPPED.get(column, width))
              for k, column in enumerate(COLUMNS)}
    gaps = 2 * (len(COLUMNS) - 1)  # a space and the divider between two columns
    fixed = sum(w for c, w in widths.items() if c not in SHARED and c != "main number")
    free = max(width - gaps - fixed, 3 * len(SHARED) + 10)
    for column, share in SHARED.items():
        widths[column] = max(min(widths[column], int(free * share)), 3)
    widths["main number"] = max(free - sum(widths[c] for c in SHARED), 10)
    shown = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), show_edge=False,
                  show_lines=True, header_style="bold")
    for column in COLUMNS:
        shown.add_column(column, width=widths[column], overflow="fold",
                         justify="right" if column in NUMBERS else "left")
    for cells in rows:
        shown.add_row(*cells)
    return shown


def _cells(entry: RunEntry) -> list[Text]:
    headline = entry.headline
    label = Text(headline.label if headline is not None else "-")
    if entry.why:
        label.append(f"\n{entry.why}", style="dim")
    number = Text("-")
    if headline is not None and headline.value is not None:
        number = Text(headline.value_text)
        if headline.interval is not None:
            number.append(f"\n{headline.interval_text}", style="dim")
    which = Text(entry.benchmark or "-")
    which.append(f"\n{entry.model or '-'}", style="dim")
    return [Text(entry.started_shown.replace(" ", "\n")), Text(entry.relative), which,
            Text(entry.status.text, style=STYLES.get(entry.status.kind, "")), label, number,
            Text("-" if entry.n is None else str(entry.n))]


def list_runs(folder: Path, console: Console, named: BenchmarkDefinition | None = None,
              page: bool = True) -> int:
    """Print the runs under `folder` and write its runs.html (`page`); a folder that does
    not exist is one line (exit 2)."""
    if folder.exists() and not folder.is_dir():
        raise FileNotFoundError(f"{folder} is a file: name the folder that holds the runs")
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (the runs are under results/ "
                                "unless --out put them elsewhere)")
    found = entries(folder, named)
    width = min(console.width, WIDTH)
    if found:
        console.print(table(found, width), width=width)
    else:
        console.print(f"no run under {folder} (a run is a folder with run.json)",
                      highlight=False, soft_wrap=True)
    if page:
        from visioneval.report.runlist_page import write

        path = write(found, folder)
        console.print(f"{len(found)} run{'s' if len(found) != 1 else ''}; page: {path}",
                      highlight=False, soft_wrap=True)
    return 0
