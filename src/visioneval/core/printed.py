"""The report's blocks (`core/blocks.py`) printed in a terminal: tables whose numbers are
never cut and whose long text cells wrap, sentences wrapped at spaces, lists, cards and
links as lines; a chart is named (it is drawn on the page only). What `visioneval show`
prints of a benchmark that has no terminal tables of its own, and the one way compare,
suite and the benchmarks build a terminal table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table as Shown
from rich.text import Text

from visioneval.core.blocks import Cards, Charts, Items, Link, Note, Section, Table
from visioneval.terminal import line

EMPTY = ("", "-", None)
ITEMS_SHOWN = 12  # a list longer than this shows its first items and says how many more
LONGEST_WORD = 24  # a column never narrows below its longest word, up to this


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1,
          title: str | None = None, bold: set[tuple[int, int]] | None = None,
          text: Sequence[int] = ()) -> Shown:
    """A terminal table that fits the console: number columns (from `numeric_from`, except
    those in `text`) right-aligned; a column narrows by wrapping its cells at spaces
    ("87.5 [62.5, 100.0]" keeps its number on the first line) but never below its longest
    word, so no number or name is cut (a word over `LONGEST_WORD`, a path, folds); a header
    may break its line with "\\n"; `bold`: (row, column) cells to mark. Every value is
    text, never markup."""
    out = Shown(title=escape(title) if title else None, title_justify="left",
                title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                padding=(0, 1), collapse_padding=True)
    cells = [[_shown(value) for value in row] for row in rows]
    for i, name in enumerate(header):
        numeric = i >= numeric_from and i not in text
        words = [w for value in [str(name), *(row[i] for row in cells if i < len(row))]
                 for w in value.split()]
        out.add_column(escape(str(name)), justify="right" if numeric else "left",
                       overflow="fold",
                       min_width=min(max(map(len, words), default=1), LONGEST_WORD))
    marked = bold or set()
    for r, row in enumerate(cells):
        out.add_row(*[_cell(value, (r, c) in marked) for c, value in enumerate(row)])
    return out


def _shown(value: Any) -> str:
    """A cell as text: None is "-" (no value); "" stays blank (a name not repeated)."""
    return "-" if value is None else str(value)


def _cell(value: str, bold: bool) -> str:
    text = escape(value)
    return f"[bold]{text}[/]" if bold else text


def show_table(console: Console, header: Sequence[str], rows: Sequence[Sequence[Any]],
               numeric_from: int = 1, text: Sequence[int] = (),
               bold: set[tuple[int, int]] | None = None,
               names: Sequence[str] | None = None) -> None:
    """`table` when its columns fit the console at their longest words; else each row as
    a record (its name, then "column: value" pairs wrapped under it, each column called by
    its `names` entry, by default its header), so that no value is ever cut however many
    columns a table has."""
    cells = [[_shown(value) for value in row] for row in rows]
    words = [max((len(w) for value in [str(name), *(row[i] for row in cells if i < len(row))]
                  for w in value.split()), default=1) for i, name in enumerate(header)]
    if sum(min(w, LONGEST_WORD) for w in words) + 2 * (len(header) - 1) <= console.width:
        console.print(table(header, rows, numeric_from, bold=bold, text=text))
        return
    marked = bold or set()
    keep = max(1, min(numeric_from, len(header)))
    for r, row in enumerate(cells):
        name = " · ".join(c for c in row[:keep] if c.strip()) or "-"
        pairs = Text()
        for c in range(keep, len(header)):
            if pairs:
                pairs.append("; ")
            pairs.append(f"{' '.join(str((names or header)[c]).split())}: ")
            pairs.append(row[c] if c < len(row) else "-",
                         style="bold" if (r, c) in marked else "")
        line(console, name)
        console.print(Padding(pairs, (0, 0, 0, 2)), highlight=False, emoji=False)


def print_table(console: Console, title: str | None, header: Sequence[str],
                rows: Sequence[Sequence[Any]], note: str | None = None,
                numeric_from: int = 1, text: Sequence[int] = ()) -> None:
    """The title (a sentence that wraps at the console's width, not the table's), the
    table (`show_table`), then what it means (`note`) under it."""
    if title:
        line(console, title, style="bold")
    show_table(console, header, rows, numeric_from, text=text)
    if note:
        line(console, note, style="dim")


def filled_columns(header: Sequence[str], rows: Sequence[Sequence[Any]],
                   keep: int = 1) -> list[int]:
    """The columns to print: the first `keep`, and every other one that has a value in
    some row (a column empty throughout says nothing)."""
    return [c for c in range(len(header))
            if c < keep or any(c < len(row) and row[c] not in EMPTY for row in rows)]


def print_section(section: Section, console: Console, page: str = "the report") -> None:
    """One section: its title, then each block; `page` names where its charts are drawn."""
    console.print()
    line(console, section.title, style="bold")
    for block in section.blocks:
        if isinstance(block, Table):
            kept = filled_columns(block.header, block.rows)
            show_table(console, [block.header[c] for c in kept],
                       [[row[c] if c < len(row) and row[c] != "" else None for c in kept]
                        for row in block.rows],
                       numeric_from=sum(1 for c in kept if c < block.numeric_from))
        elif isinstance(block, Note):
            line(console, block.text, style="dim")
        elif isinstance(block, Items):
            for item in block.items[:ITEMS_SHOWN]:
                line(console, f"- {item}")
            if len(block.items) > ITEMS_SHOWN:
                line(console, f"  ... and {len(block.items) - ITEMS_SHOWN} more in {page}")
        elif isinstance(block, Charts):
            count = len(block.charts)
            line(console, f"({count} chart{'s' if count != 1 else ''} in {page})", style="dim")
        elif isinstance(block, Link):
            line(console, f"{block.before}{block.text} ({block.href})")
        elif isinstance(block, Cards):
            for label, value in block.cards:
                line(console, f"{label}: {value}")


def print_sections(sections: Sequence[Section], console: Console,
                   page: str = "the report") -> None:
    for section in sections:
        print_section(section, console, page)
