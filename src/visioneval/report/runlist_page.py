"""runs.html: the runs under a folder as one self-contained page (no network), each row
linking the run's report.html, or (`visioneval view`'s home) its sample browser; a click on a
column's head sorts by it (`pages/assets/sortable.js`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from visioneval.core.store import write_atomic
from visioneval.report import templating
from visioneval.report.runlist import RunEntry

PAGE = "runs.html"
NOTE = ("Newest first; click a column's head to sort by it (again to reverse). The main "
        "number is each benchmark's own reading of its metrics.json, with its 95% interval "
        "(docs/report.md); a run without one says why. n: the samples behind it.")


@dataclass(frozen=True)
class Row:
    """One run as the page shows it: each cell's text and its sort key."""

    run: str
    href: str | None
    started: str
    started_key: str
    benchmark: str
    model: str
    status: str
    kind: str
    label: str
    why: str
    value: str
    value_key: str
    interval: str
    low_key: str
    n: str
    n_key: str


def row(entry: RunEntry, href: str | None) -> Row:
    headline = entry.headline
    scale = 100 if headline is not None and headline.percent else 1  # sorted as shown
    value = headline.value * scale if headline is not None and headline.value is not None \
        else None
    ends = headline.interval if headline is not None and headline.interval else (None, None)
    low = None if ends[0] is None else ends[0] * scale  # an open lower end sorts first
    return Row(entry.relative, href, entry.started_shown, _epoch(entry.started),
               entry.benchmark, entry.model, entry.status.text, entry.status.kind,
               headline.label if headline is not None else "-", entry.why,
               headline.value_text if headline is not None else "-",
               "" if value is None else repr(value),
               headline.interval_text if headline is not None else "-",
               "" if low is None else repr(low),
               "-" if entry.n is None else str(entry.n),
               "" if entry.n is None else str(entry.n))


def _epoch(started: str | None) -> str:
    """Seconds since 1970 (the sort key: the script compares numbers or text)."""
    if not started:
        return ""
    try:
        return str(dt.datetime.fromisoformat(started).timestamp())
    except ValueError:
        return ""


def report_link(folder: Path) -> Callable[[RunEntry], str | None]:
    """Each run's report.html, relative to the page in `folder`, when it exists."""
    def link(entry: RunEntry) -> str | None:
        if not entry.report:
            return None
        inside = "" if entry.relative == "." else f"{quote(entry.relative)}/"
        return f"{inside}report.html"
    return link


def render(entries: Sequence[RunEntry], folder: Path,
           link: Callable[[RunEntry], str | None], subtitle: str = "") -> str:
    return templating.render(
        "runs.html", title=f"runs in {folder}", subtitle=subtitle or str(folder.resolve()),
        rows=[row(e, link(e)) for e in entries], folder=str(folder), note=NOTE,
        css=templating.CSS.read_text()
        + (templating.ASSETS / "runs.css").read_text(),
        script=templating.SORTABLE.read_text())


def write(entries: Sequence[RunEntry], folder: Path) -> Path:
    """runs.html in `folder`, written atomically."""
    path = folder / PAGE
    write_atomic(path, render(entries, folder, report_link(folder)).encode("utf-8"))
    return path
