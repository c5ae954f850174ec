"""A paper's published numbers as data, with where they come from and what each one means
(`visioneval reference`, `visioneval compare --reference paper`), and a run's own numbers
laid out the same way. A benchmark's folder holds its table (`BenchmarkDefinition.published`);
nothing here names a benchmark.

Every number is in percent, as the source prints it; `tolerance` says how far a printed
number may be from the one it stands for (0.05 for values printed with one decimal, more
for values read off a figure)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel

Setting = Mapping[str, int | str]


@dataclass(frozen=True)
class Source:
    """Where the numbers were read: what, at which address and version, and how."""

    what: str
    url: str
    version: str
    transcription: str


@dataclass(frozen=True)
class Departure:
    """Where a harness scores the benchmark otherwise than the paper: the harness, what it
    does, where in its code (file and line at a named commit), and what that does to the
    numbers."""

    harness: str
    what: str
    where: str
    effect: str = ""


@dataclass(frozen=True)
class Column:
    """One published quantity (e.g. P3 Detection exact match). `table` and `row` place it
    when printed: the sub-table it belongs to and, within it, an extra row label ("" none);
    `name` is its header there, `label` its name on its own ("P3 D EM"); `meaning` says
    what the number is (metric, parser, protocol)."""

    key: str
    table: str
    row: str
    name: str
    label: str
    meaning: str


@dataclass(frozen=True)
class Model:
    """A published model: its name here, the names the source prints, other names that
    mean it, and a remark (e.g. an unsure identification)."""

    name: str
    printed: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    note: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.printed, *self.aliases)


@dataclass(frozen=True)
class Row:
    """One model under one setting (e.g. 3 shots): column key -> value in percent, and
    remarks on single cells (a value the source contradicts elsewhere)."""

    model: str
    setting: Setting
    cells: Mapping[str, float]
    cell_notes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedTable:
    """A benchmark's published results with their provenance. `protocol` is how the
    published numbers were produced (setting -> what the paper did); `settings` names the
    row settings (e.g. shots) in display order; `notes` are caveats a reader must see."""

    benchmark: str
    title: str
    citation: str
    sources: tuple[Source, ...]
    tolerance: float
    protocol: tuple[tuple[str, str], ...]
    settings: tuple[str, ...]
    columns: tuple[Column, ...]
    models: tuple[Model, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()
    units: str = "percent"
    departures: tuple[Departure, ...] = ()

    def __post_init__(self) -> None:
        keys = {c.key for c in self.columns}
        names = {m.name for m in self.models}
        for row in self.rows:
            if row.model not in names:
                raise ValueError(f"{self.benchmark} published row names unknown model "
                                 f"{row.model!r}")
            unknown = set(row.cells) - keys
            if unknown:
                raise ValueError(f"{self.benchmark} published row {row.model} has unknown "
                                 f"column(s) {', '.join(sorted(unknown))}")

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def model_names(self) -> list[str]:
        return [m.name for m in self.models]

    def rows_of(self, model: str) -> list[Row]:
        return [r for r in self.rows if r.model == model]

    def tables(self) -> list[str]:
        """The sub-tables' titles, in column order."""
        return list(dict.fromkeys(c.table for c in self.columns))

    def find_model(self, name: str) -> Model | None:
        """The published model `name` means (`match_model`), or None."""
        return match_model(self.models, name)


class ModelEntry(BaseModel, frozen=True):
    """A published model as a benchmark's published.json lists it (`Model`'s fields)."""

    name: str
    printed: list[str] = []
    aliases: list[str] = []
    note: str = ""

    def model(self) -> Model:
        return Model(self.name, tuple(self.printed), tuple(self.aliases), self.note)


class PublishedFile(BaseModel, frozen=True):
    """What every benchmark's `published.json` says besides its rows: the table's provenance
    (`PublishedTable`'s fields of the same names) and the size of the published set
    (`full_rows`, rows per part, and where that count comes from), which a run's
    differences name when it scored fewer. A benchmark's own file adds its rows, models and
    layout."""

    benchmark: str
    title: str
    citation: str
    sources: list[Source]
    tolerance: float
    protocol: list[tuple[str, str]]
    notes: list[str]
    full_rows: dict[str, int]
    full_rows_source: str
    departures: list[Departure] = []

    @classmethod
    def read(cls, path: Path) -> Self:
        """`path` (a benchmark's published.json) read in this layout."""
        return cls.model_validate(json.loads(path.read_text()))

    def table(self, columns: Iterable[Column], models: Iterable[Model], rows: Iterable[Row],
              settings: tuple[str, ...] = ("shots",)) -> PublishedTable:
        """The file's columns, models and rows (read in the benchmark's own layout) with
        its provenance."""
        return PublishedTable(
            benchmark=self.benchmark, title=self.title, citation=self.citation,
            sources=tuple(self.sources), tolerance=self.tolerance,
            protocol=tuple(self.protocol), settings=settings, columns=tuple(columns),
            models=tuple(models), rows=tuple(rows), notes=tuple(self.notes),
            departures=tuple(self.departures))


# Trailing parts of a served model's name that do not change which model it is: a release
# date (gpt-4o-2024-08-06), an instruction-tuned or chat or Hugging Face suffix, Ollama's
# default tag.
_SUFFIXES = re.compile(r"(?:[-_:](?:instruct|chat|hf|latest|\d{4}-?\d{2}-?\d{2}))+$",
                       re.IGNORECASE)


def name_key(name: str) -> str:
    """A name reduced to what identifies it: the part after a provider prefix
    (`openai/gpt-4o`), lowercase, a `v` before a version dropped (llava-v1.6), and every
    character other than letters, digits and dots removed (`LLava 1.6-7B` = `llava-1.6-7b`)."""
    base = name.strip().rsplit("/", 1)[-1].lower()
    base = re.sub(r"(?<![a-z])v(?=\d)", "", base)
    return re.sub(r"[^a-z0-9.]+", "", base)


def match_model(models: tuple[Model, ...] | list[Model], name: str) -> Model | None:
    """The model whose name, printed name or alias is `name` once both are reduced by
    `name_key`; failing that, the same after dropping a date, `-instruct`, `-chat`, `-hf` or
    `:latest` from `name`. Never a prefix match: gpt-4o-mini is not GPT-4o."""
    for candidate in (name, _SUFFIXES.sub("", name.strip())):
        key = name_key(candidate)
        if not key:
            continue
        for model in models:
            if any(name_key(n) == key for n in model.names):
                return model
    return None


@dataclass(frozen=True)
class RunValue:
    """A run's number for one published cell, in percent, with its 95% interval when the
    run's metrics carry one; `missing` says why the value or the interval is absent."""

    value: float | None
    ci95: tuple[float, float] | None = None
    missing: str = ""


def run_value(block: Mapping[str, Any] | None, key: str) -> RunValue:
    """`block[key]` (a fraction) in percent, with `block[key + "_ci95"]` when present (the
    metrics.json contract for intervals; its reason `key + "_ci95_unavailable"` otherwise)."""
    if not block or not isinstance(block.get(key), int | float):
        reason = (block or {}).get("unavailable") or "not in this run's metrics"
        return RunValue(None, None, str(reason))
    value = 100 * float(block[key])
    interval = block.get(f"{key}_ci95")
    if isinstance(interval, list | tuple) and len(interval) == 2 \
            and all(isinstance(x, int | float) for x in interval):
        return RunValue(value, (100 * float(interval[0]), 100 * float(interval[1])))
    reason = block.get(f"{key}_ci95_unavailable")
    return RunValue(value, None, f"no interval ({reason})" if reason else "no interval")


@dataclass(frozen=True)
class RunBeside:
    """A run laid out as its benchmark's published table: which published setting it
    corresponds to (e.g. its shots), how its numbers were computed (`compared_as`), its
    value for each published column it has, and every setting of the run that differs from
    the published protocol (each a sentence naming the run's value and the paper's)."""

    setting: Setting
    compared_as: str
    values: Mapping[str, RunValue]
    differences: tuple[str, ...] = ()
