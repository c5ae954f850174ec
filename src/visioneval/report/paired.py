"""`visioneval compare`'s paired tests: each run against the first, on the metrics its
benchmark pairs (`capabilities.PairsRecords`), streamed from the journals."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from visioneval import csvcells
from visioneval.core import registry
from visioneval.core.capabilities import PairsRecords
from visioneval.core.rundir import RunView, load_all
from visioneval.core.store import write_atomic
from visioneval.stats.paired import PairedCollector, PairedResult, paired


@dataclass
class PairedComparison:
    first: str
    other: str
    results: list[PairedResult] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)


def _collect(view: RunView) -> PairedCollector:
    definition = view.shown
    collector = PairedCollector()
    if not isinstance(definition, PairsRecords):  # nothing to pair (the generic definition)
        return collector
    for record in view.iter_records():
        if record.ok:
            collector.add(record.id, definition.paired_rows(record))
    return collector


def paired_comparisons(directories: Sequence[Path | RunView],
                       definition: registry.Named = None) -> list[PairedComparison]:
    """Every run after the first against the first (`definition`: as `rundir.load_all`)."""
    views = load_all(directories, definition)
    if len(views) < 2:
        return []
    first = _collect(views[0])
    out = []
    for view in views[1:]:
        results, unpaired = paired(first, _collect(view))
        out.append(PairedComparison(str(views[0].directory), str(view.directory), results,
                                    unpaired))
    return out


def show(comparisons: list[PairedComparison], console: Console) -> None:
    for item in comparisons:
        if not item.results and not item.unpaired:
            continue
        table = Table(title=f"Paired tests: {item.other} against {item.first} (same samples)",
                      title_justify="left")
        for column in ("metric", "test", "first", "this", "difference", "p", "", "detail"):
            table.add_column(column, justify="right" if column in ("first", "this",
                                                                   "difference", "p")
                             else "left")
        for r in item.results:
            table.add_row(r.key, r.test, f"{100 * r.a:.1f}", f"{100 * r.b:.1f}",
                          f"{100 * r.difference:+.1f}",
                          "-" if r.p_value is None else f"{r.p_value:.3g}",
                          "significant" if r.significant else "not significant", r.detail)
        if item.results:
            console.print(table)
        if item.unpaired:
            console.print(f"compared without pairing ({item.other} and {item.first} were not "
                          f"scored on the same samples): {', '.join(item.unpaired)}",
                          highlight=False, soft_wrap=True, markup=False)


def write_csv(comparisons: list[PairedComparison], path: Path) -> Path:
    """paired.csv, written whole or not at all (a full disk is one line naming it)."""
    buf = io.StringIO(newline="")
    writer = csvcells.writer(buf)
    writer.writerow(["first run", "this run", "metric", "test", "first", "this",
                     "difference", "difference 95% low", "difference 95% high", "p",
                     "significant at 5%", "detail"])
    for item in comparisons:
        for r in item.results:
            low, high = r.interval or ("", "")
            writer.writerow([item.first, item.other, r.key, r.test, r.a, r.b, r.difference,
                             low, high, "" if r.p_value is None else r.p_value,
                             r.significant, r.detail])
        for key in item.unpaired:
            writer.writerow([item.first, item.other, key, "not paired (different samples)",
                             "", "", "", "", "", "", "", ""])
    write_atomic(path, buf.getvalue().encode("utf-8"))
    return path
