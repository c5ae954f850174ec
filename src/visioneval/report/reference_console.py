"""The terminal's view of published numbers: a benchmark's published tables
(`visioneval reference`) and runs beside their published rows (`compare --reference`)."""

from __future__ import annotations

import re

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from visioneval.core.published import Model, PublishedTable, Row
from visioneval.report.reference import (
    HEADER,
    LEGEND,
    ReferenceReport,
    cell_row,
    heading,
)
from visioneval.terminal import line


def _table(header: list[str], numeric_from: int, stack: bool = False,
           name_width: int = 12) -> Table:
    """A table whose numbers are never cut: `stack` puts each word of a numeric column's
    header on its own line (narrow columns); the first column (a name) folds when the
    terminal is narrow, but not below `name_width`. Its title is a line of its own
    (`_titled`), wrapped at the terminal's width rather than the table's."""
    table = Table(box=box.SIMPLE_HEAVY, pad_edge=False, padding=0, collapse_padding=True,
                  show_edge=False)
    for i, name in enumerate(header):
        numeric = i >= numeric_from
        table.add_column(escape(name.replace(" ", "\n") if numeric and stack else name),
                         justify="right" if numeric else "left", no_wrap=numeric,
                         overflow="fold", min_width=name_width if i == 0 else None)
    return table


def _titled(console: Console, title: str, table: Table) -> None:
    console.print()
    line(console, title, style="bold")
    console.print(table)


def show_published(table: PublishedTable, console: Console, model: Model | None = None
                   ) -> None:
    """Every sub-table of the published numbers (one model's rows when `model` is given),
    then where they come from, what each means and the caveats."""
    rows = table.rows_of(model.name) if model else list(table.rows)
    for title in table.tables():
        columns = [c for c in table.columns if c.table == title]
        names = list(dict.fromkeys(c.name for c in columns))
        labels = list(dict.fromkeys(c.row for c in columns))
        lead = ["Model", *(s.capitalize() for s in table.settings)] + (["Task"] if any(labels)
                                                                      else [])
        longest = max((len(r.model) for r in rows), default=5)
        out = _table(lead + names, len(lead), stack=True, name_width=min(longest, 12))
        for row in rows:
            for label in labels:
                keys = {c.name: c.key for c in columns if c.row == label}
                values = [_value(row, keys.get(n)) for n in names]
                if any(v != "-" for v in values):
                    out.add_row(*map(escape, [row.model, *(str(row.setting.get(s, ""))
                                                           for s in table.settings),
                                              *([label] if any(labels) else []), *values]))
        _titled(console, f"{title} ({table.units})", out)
    if model is not None:
        _model_notes(table, model, rows, console)
    else:
        flagged = sum(len(r.cell_notes) for r in rows)
        if flagged:
            console.print(f"* {flagged} cells carry a note; --model NAME shows a model's.",
                          highlight=False)
    _provenance(table, console)


def _value(row: Row, key: str | None) -> str:
    if key is None or key not in row.cells:
        return "-"
    return f"{row.cells[key]:.1f}" + (" *" if key in row.cell_notes else "")


def _model_notes(table: PublishedTable, model: Model, rows: list[Row],
                 console: Console) -> None:
    if model.printed and model.printed != (model.name,):
        line(console, f"{model.name}: printed as {', '.join(model.printed)} in the source.")
    if model.note:
        line(console, f"{model.name}: {model.note}.")
    for row in rows:
        for key, note in row.cell_notes.items():
            setting = ", ".join(f"{k} {v}" for k, v in row.setting.items())
            line(console, f"* {row.model} ({setting}), {table.column(key).label}: {note}")


def sources(table: PublishedTable, console: Console) -> None:
    """Where the published numbers come from, as `reference.source_lines` says it, each
    source's address on a line of its own (a commit named by its first 12 hex digits, which
    GitHub resolves, so the address fits the terminal whole)."""
    line(console, f"{table.title}. {table.citation}.")
    for s in table.sources:
        line(console, f"Source: {s.what} ({s.version}). Read: {s.transcription}.")
        line(console, f"  {printed_url(s.url)}")
    line(console, f"Values in {table.units}; a published value may be {table.tolerance} from "
                  "the number it stands for (\"at the edge\": outside the interval by no more).")


def printed_url(url: str) -> str:
    """A GitHub address with its full commit hash shortened to 12 hex digits."""
    return re.sub(r"(github\.com/[^/]+/[^/]+/(?:blob|tree)/)([0-9a-f]{12})[0-9a-f]{28}/",
                  r"\1\2/", url)


def _provenance(table: PublishedTable, console: Console) -> None:
    console.print()
    sources(table, console)
    console.print("What the published numbers were produced with:", highlight=False)
    for key, value in table.protocol:
        line(console, f"  {key}: {value}")
    console.print("Notes:", highlight=False)
    for note in table.notes:
        line(console, f"  - {note}")
    departures(table, console)


def departures(table: PublishedTable, console: Console) -> None:
    """Where each harness scores the benchmark otherwise than the paper, with the file and
    line of its code, harness by harness."""
    if not table.departures:
        return
    console.print("Where the harnesses depart from the paper:", highlight=False)
    for harness in dict.fromkeys(d.harness for d in table.departures):
        line(console, f"  {harness}:")
        for d in table.departures:
            if d.harness == harness:
                effect = f"; {d.effect}" if d.effect else ""
                line(console, f"    - {d.what} ({d.where}){effect}")


def show_beside(report: ReferenceReport, console: Console) -> None:
    """Each run's cells beside the published row, then what differs and the sources."""
    console.print()
    if report.note:
        line(console, report.note)
    for run in report.runs:
        if run.problem:
            line(console, f"{heading(run)}: {run.problem}")
            continue
        widest = max((len(c.column.label) + 2 for c in run.cells), default=4)
        out = _table(HEADER, 1, stack=True, name_width=widest)
        for cell in run.cells:
            out.add_row(*map(escape, cell_row(cell, report.table.tolerance)))
        _titled(console, heading(run), out)
        lines = [LEGEND, f"compared as: {run.compared_as}"]
        lines += [f"* {c.column.label}: {c.note}" for c in run.cells if c.note]
        if run.not_run:
            lines.append("not in this run: " + "; ".join(run.not_run))
        lines.append("differs from the published protocol:"
                     + ("" if run.differences else " nothing visioneval can see"))
        lines += [f"  - {d}" for d in run.differences]
        for text in lines:
            line(console, text)
        console.print()
    sources(report.table, console)
    for note in report.table.notes:
        line(console, f"  - {note}")
