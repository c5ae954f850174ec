"""A comparison table (`visioneval compare`, each benchmark of a suite) in the terminal, drawn
from the same table model as the compare and suite pages (`report.compare`: the columns no
run has a value in left out, a shared first part of neighbouring column names said once,
the marked values bold), then its notes and the sections beside it. The Markdown of
comparison.md is for that file only."""

from __future__ import annotations

from rich.console import Console

from visioneval.core.blocks import ComparisonTable
from visioneval.core.printed import print_section, show_table
from visioneval.report.compare import HeadCell, header_rows, page_rows, shown_columns
from visioneval.terminal import line


def labels(heads: list[list[HeadCell]]) -> list[str]:
    """One terminal header per column from the page's header rows: a shared first part on
    the first line of the first column it spans, each column's own last word below."""
    if len(heads) == 1:
        return [cell.text for cell in heads[0]]
    top, below = heads
    out: list[str] = []
    lower = iter(below)
    for cell in top:
        if cell.rows == 2:
            out.append(cell.text)
            continue
        for k in range(cell.span):
            out.append(f"{cell.text if k == 0 else ''}\n{next(lower).text}")
    return out


def show(result: ComparisonTable, console: Console, title: str | None = None,
         page: str = "comparison.html, written with --out") -> None:
    """The table, then what it means (the mark rule and the notes) and the sections beside
    it (their tables and notes; charts are on the `page`). The flags (what differs between
    the runs) are the caller's to say, once."""
    columns = shown_columns(result)
    cells = page_rows(result, columns)
    bold = {(r, c) for r, row in enumerate(cells) for c, cell in enumerate(row) if cell.best}
    if title:
        line(console, title, style="bold")
    shown = [result.header[c] for c in columns]
    show_table(console, labels(header_rows(shown)), [[cell.text for cell in row]
                                                     for row in cells],
               numeric_from=2, bold=bold, names=shown)
    left_out = [result.header[c] for c in range(len(result.header)) if c not in columns]
    notes = [*result.mark_notes(intervals_shown=False), *result.notes]
    if left_out:
        notes.append(f"Left out here (no run has a value): {', '.join(left_out)}.")
    for note in notes:
        line(console, note, style="dim")
    for section in result.sections:
        print_section(section, console, page=page)
