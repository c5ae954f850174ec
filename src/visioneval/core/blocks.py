"""What a benchmark puts on its report page, as data: titled sections of tables, notes, lists
and charts (`core.figures`). A benchmark never writes HTML or SVG; the page's templates
render these (and escape every value), so no benchmark can break the page or inject markup
into it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from visioneval.core.figures import Chart
from visioneval.core.marks import PERCENT, Interval, Verdict, notes, percent, verdict
from visioneval.fmt import pct

if TYPE_CHECKING:
    from visioneval.core.view import ReadableRun


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Any]]
    numeric_from: int = 1  # cells from this column on are right-aligned
    kind: str = "table"


@dataclass(frozen=True)
class Note:
    text: str
    kind: str = "note"


@dataclass(frozen=True)
class Items:
    items: list[str]
    kind: str = "items"


@dataclass(frozen=True)
class Charts:
    """Charts side by side, as data (`core.figures`: numbers, labels, units); the page
    draws each with `report.drawing`, whose templates escape every label."""
    charts: Sequence[Chart]
    kind: str = "charts"


@dataclass(frozen=True)
class Link:
    text: str
    href: str  # relative to the page
    before: str = ""  # text in front of the link
    kind: str = "link"


@dataclass(frozen=True)
class Cards:
    """Headline counts as cards: (label, value) pairs."""
    cards: list[tuple[str, Any]]
    kind: str = "cards"


Block = Table | Note | Items | Charts | Link | Cards


@dataclass(frozen=True)
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class ComparisonTable:
    """Several runs in one table (`visioneval compare`): the first two columns name the run
    (model and setting), the rest are numbers in percent. A value is marked best only when
    its 95% interval clears every other run's (`report.marks`: one rule for the page, the
    Markdown table and the terminal)."""
    benchmark: str
    header: list[str]
    rows: list[list[str]]
    higher_is_better: list[bool]  # per column, from the third on
    flags: list[str] = field(default_factory=list)
    # The run behind each row (same order): `compare` adds its cost and tells apart rows
    # that would read alike.
    runs: list[ReadableRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the columns mean, under the table
    # Per row, per column (as `header`): the cell's 95% interval in the cell's units
    # (percent), None where there is none. Rows or columns left out have none.
    intervals: list[list[Interval | None]] = field(default_factory=list)
    units: str = PERCENT  # what the numbers are in, said first under the table
    # Figures and tests beside the table (a benchmark's own, as data): the compare page
    # draws them as a run's page draws its sections; comparison.md and the terminal give
    # their tables and notes, and say where the charts are.
    sections: list[Section] = field(default_factory=list)

    def interval(self, row: int, col: int) -> Interval | None:
        spans = self.intervals[row] if row < len(self.intervals) else []
        return spans[col] if col < len(spans) else None

    def verdicts(self) -> list[Verdict]:
        """Per numeric column that two or more runs have a value in: the marked row, or
        why none is marked."""
        out = []
        for col in range(2, len(self.header)):
            found = verdict([_number(r[col]) for r in self.rows],
                            [self.interval(i, col) for i in range(len(self.rows))],
                            self.higher_is_better[col - 2])
            if found is not None:
                out.append(Verdict(col, self.header[col], *found))
        return out

    def best(self) -> dict[int, float]:
        """Column index -> the marked value, for the columns where one is marked (it is the
        only value of its column that high, or that low)."""
        return {v.column: value for v in self.verdicts() if v.row is not None
                and (value := _number(self.rows[v.row][v.column])) is not None}

    def is_best(self, row: list[str], col: int, best: dict[int, float]) -> bool:
        value = _number(row[col])
        return value is not None and col in best and value == best[col]

    def mark_notes(self, intervals_shown: bool = False) -> list[str]:
        """The mark rule and the unmarked columns with why, for under the table."""
        return notes(self.verdicts(), intervals_shown, self.units)


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


@dataclass
class PercentRows:
    """The rows of a comparison whose cells are metrics.json fractions shown in percent,
    each with its `<key>_ci95` interval: one `add` per run and setting, then `table`."""
    missing: str = ""  # what a cell the run does not have shows
    rows: list[list[str]] = field(default_factory=list)
    runs: list[ReadableRun] = field(default_factory=list)
    intervals: list[list[Interval | None]] = field(default_factory=list)

    def add(self, view: ReadableRun, setting: str,
            cells: Sequence[tuple[Mapping[str, Any], str]]) -> None:
        """A row for `view` under `setting`: each cell `block[key]` in percent."""
        self.rows.append([view.model, setting,
                          *(pct(block.get(key), missing=self.missing) for block, key in cells)])
        self.intervals.append([None, None, *(percent(block.get(f"{key}_ci95"))
                                             for block, key in cells)])
        self.runs.append(view)

    def table(self, benchmark: str, header: list[str], notes: list[str]) -> ComparisonTable:
        """Higher is better in every numeric column."""
        return ComparisonTable(benchmark, header, self.rows, [True] * (len(header) - 2),
                               runs=self.runs, intervals=self.intervals, notes=notes)
