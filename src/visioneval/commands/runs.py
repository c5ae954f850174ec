"""`visioneval runs [DIR]`: every run under a folder in a table (newest first), and the same
as DIR/runs.html."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rich.console import Console
from rich.text import Text

from visioneval.commands.common import consoles, guarded, named_definition
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.report.runlist import RunEntry, entries
from visioneval.report.runlist_page import write

WIDTH = 100
STYLES = {"finished": "green", "errors": "yellow", "stopped": "yellow",
          "interrupted": "yellow", "running": "bold blue", "broken": "red"}
STARTED = 16  # "2026-11-28 16:22"
INDENT = " " * (STARTED + 2)


def listing(found: list[RunEntry], width: int = WIDTH) -> list[Text]:
    """The runs as lines of at most `width` columns, two a run (newest first): when it
    started, its folder, benchmark, model and status; under them its main number with the
    95% interval, what the number is and n. A reason (no number, no interval, a broken
    directory) is a third line, dimmed. A folder too long for its line wraps at its `/`."""
    lines = [Text(f"{'started':<{STARTED}}  run  ·  benchmark · model · status", style="bold"),
             Text(f"{'':<{STARTED}}  main number [95% interval] · what it is · n",
                  style="bold")]
    for entry in found:
        lines += _entry(entry, width)
    return lines


def _entry(entry: RunEntry, width: int) -> list[Text]:
    tail = Text(f"{entry.benchmark or '-'} · {entry.model or '-'} · ")
    tail.append(entry.status.text, style=STYLES.get(entry.status.kind, ""))
    first = Text(f"{entry.started_shown:<{STARTED}}  {entry.relative}  ")
    out = []
    if first.cell_len + tail.cell_len <= width:
        first.append_text(tail)
        out.append(first)
    else:  # the folder on its line(s), then what it ran on the next
        out += [Text(part) for part in _wrapped(first.plain.rstrip(), width, INDENT)]
        out.append(Text(INDENT) + tail)
    headline = entry.headline
    number = "-"
    if headline is not None and headline.value is not None:
        number = headline.value_text
        if headline.interval is not None:
            number += f" [{headline.interval_text}]"
    said = [number, headline.label if headline is not None else ""]
    if entry.n is not None:
        said.append(f"n {entry.n}")
    out += [Text(part) for part in
            _wrapped(INDENT + " · ".join(p for p in said if p), width, INDENT)]
    if entry.why:
        out += [Text(part, style="dim") for part in
                _wrapped(INDENT + entry.why, width, INDENT)]
    return out


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    return textwrap.wrap(text, width=width, subsequent_indent=indent,
                         break_on_hyphens=False) or [text]


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
        for text in listing(found, width):
            console.print(text, highlight=False, soft_wrap=True, emoji=False)
    else:
        console.print(f"no run under {folder} (a run is a folder with run.json)",
                      highlight=False, soft_wrap=True)
    if page:
        path = write(found, folder)
        console.print(f"{len(found)} run{'s' if len(found) != 1 else ''}; page: {path}",
                      highlight=False, soft_wrap=True)
    return 0


def runs(folder: Path, no_page: bool, definition: str | None) -> int:
    """`visioneval runs`: the list printed and the page written; exit 0, or 2 with one
    line."""
    console, err = consoles()
    return guarded(err, lambda: list_runs(folder, console, named_definition(definition),
                                          page=not no_page))
