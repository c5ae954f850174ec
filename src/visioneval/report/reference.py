"""`visioneval compare --reference paper`: each run beside its benchmark's published row, cell
by cell: the run's value, the published one, the difference in points, and whether the
published value lies inside the run's 95% interval; with every setting of the run that
differs from the published protocol. The benchmark's definition supplies the table
(`HasPublished.published`) and the run's numbers under its columns (`beside_published`);
nothing here names a benchmark."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.core import registry
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.capabilities import HasPublished
from visioneval.core.published import Column, Model, PublishedTable, Row, RunValue
from visioneval.core.rundir import OpenedRun, load_all
from visioneval.io import csvcells
from visioneval.report.markdown import md_escape

REFERENCES = ("paper",)  # what --reference accepts: the benchmark's published table


@dataclass(frozen=True)
class CellLine:
    """One published cell beside the run's value for it (percent)."""

    column: Column
    run: RunValue
    published: float
    note: str = ""

    @property
    def difference(self) -> float | None:
        """Run minus published, in points."""
        return None if self.run.value is None else self.run.value - self.published

    def verdict(self, tolerance: float) -> str:
        """Whether the published value lies inside the run's 95% interval; "at the edge" when
        it is outside by no more than the published value's own rounding (`tolerance`)."""
        if self.run.value is None:
            return f"not computed: {self.run.missing}"
        if self.run.ci95 is None:
            return self.run.missing or "no interval"
        low, high = self.run.ci95
        if low <= self.published <= high:
            return "inside"
        if low - tolerance <= self.published <= high + tolerance:
            return "at the edge"
        return "outside"


@dataclass(frozen=True)
class RunReference:
    """One run beside the published row it is compared with (None: no row, see `problem`)."""

    label: str
    model: str
    published_model: str | None
    matched_by: str
    setting: Mapping[str, int | str]
    row_setting: Mapping[str, int | str] | None
    compared_as: str
    cells: tuple[CellLine, ...]
    not_run: tuple[str, ...]
    differences: tuple[str, ...]
    problem: str = ""


@dataclass(frozen=True)
class ReferenceReport:
    table: PublishedTable
    runs: tuple[RunReference, ...]
    note: str = ""  # said once, e.g. that the table above was narrowed and these are not


def unknown_model(table: PublishedTable, name: str, what: str) -> ValueError:
    return ValueError(f"{what} {name!r} matches no model published for {table.benchmark}; "
                      f"known: {', '.join(table.model_names())}")


def publisher(definition: BenchmarkDefinition, name: str | None = None) -> HasPublished:
    """The definition as one that has published numbers (`HasPublished`), or the ValueError
    naming the benchmarks that do (`name`: the benchmark's, for the error)."""
    if isinstance(definition, HasPublished):
        return definition
    have = [n for n in registry.names() if isinstance(registry.definition(n), HasPublished)]
    name = name or getattr(definition, "name", "this benchmark")
    raise ValueError(f"no published numbers are shipped for {name}; "
                     f"benchmarks with published numbers: {', '.join(have)}")


def published_table(definition: BenchmarkDefinition, name: str | None = None
                    ) -> PublishedTable:
    """The definition's published table (`publisher`)."""
    return publisher(definition, name).published()


def beside_paper(directories: Sequence[Path | OpenedRun], reference_model: str | None = None,
                 note: str = "", definition_named: registry.Named = None,
                 named_by: str = "--reference-model") -> ReferenceReport:
    """Each run beside its published row. `reference_model` names the published model for
    every run (an unknown name is an error listing the known ones); without it each run's
    own model name is matched, and a run whose name matches none says so.
    `definition_named`: as `rundir.load_all`; `named_by`: where `reference_model` was given
    (an option of compare, a field of a suite file), for the lines that say so."""
    views = load_all(directories, definition_named)
    definition = publisher(views[0].shown, views[0].benchmark)
    table = definition.published()
    chosen = None
    if reference_model is not None:
        chosen = table.find_model(reference_model)
        if chosen is None:
            raise unknown_model(table, reference_model, named_by)
    beside = []
    for view in views:
        if view.benchmark != views[0].benchmark:
            raise ValueError("--reference paper compares runs of one benchmark at a time")
        beside.append(_run_reference(definition, table, view, chosen, named_by))
    return ReferenceReport(table, tuple(beside), note)


def _label(view: OpenedRun) -> str:
    return f"{view.model} ({view.directory.name})"


def _run_reference(definition: HasPublished, table: PublishedTable, view: OpenedRun,
                   chosen: Model | None, named_by: str = "--reference-model") -> RunReference:
    beside = definition.beside_published(view)
    model = chosen or table.find_model(view.model)
    how = named_by if chosen else "the run's model name"
    if model is None:
        return RunReference(_label(view), view.model, None, "", beside.setting, None,
                            beside.compared_as, (), (), beside.differences,
                            f"the run's model {view.model!r} matches no published model; "
                            f"name one with {named_by} (known: "
                            f"{', '.join(table.model_names())})")
    row, setting_differences = _row(table, model, beside.setting)
    cells = tuple(CellLine(c, beside.values[c.key], row.cells[c.key],
                           row.cell_notes.get(c.key, ""))
                  for c in table.columns if c.key in row.cells and c.key in beside.values)
    missing: dict[str, int] = {}
    for c in table.columns:
        if c.key in row.cells and c.key not in beside.values:
            missing[c.table] = missing.get(c.table, 0) + 1
    not_run = tuple(f"{t} ({n} cells)" for t, n in missing.items())
    return RunReference(_label(view), view.model, model.name, how, beside.setting,
                        row.setting, beside.compared_as, cells, not_run,
                        (*setting_differences, *_run_differences(view), *beside.differences))


def _row(table: PublishedTable, model: Model, setting: Mapping[str, int | str]
         ) -> tuple[Row, list[str]]:
    """The model's row with the run's setting; else its first row, and what differs."""
    rows = table.rows_of(model.name)
    for row in rows:
        if all(row.setting.get(k) == setting.get(k) for k in table.settings):
            return row, []
    row = rows[0]
    out = []
    for key in table.settings:
        if row.setting.get(key) != setting.get(key):
            published = ", ".join(dict.fromkeys(str(r.setting.get(key)) for r in rows))
            out.append(f"{key} {setting.get(key)}: {model.name} is published with {key} "
                       f"{published} only; compared with {key} {row.setting.get(key)}")
    return row, out


def _run_differences(view: OpenedRun) -> list[str]:
    """Differences any benchmark's run can have: it is one shard, or a merge missing some."""
    out = []
    shard = view.info.shard
    if shard is not None:
        out.append(f"shard {shard.label}: this run holds part of the samples")
    missing = view.info.missing_shards or []
    if missing:
        out.append("merged without shard(s) "
                   + ", ".join(f"{m.index}/{m.count}" for m in missing)
                   + ": part of the samples are absent")
    return out


def number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def interval(run: RunValue) -> str:
    return "-" if run.ci95 is None else f"{run.ci95[0]:.1f} to {run.ci95[1]:.1f}"


def setting_text(setting: Mapping[str, int | str] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (setting or {}).items())


def source_lines(table: PublishedTable) -> list[str]:
    """Where the published numbers come from, one sentence each."""
    out = [f"{table.title}. {table.citation}."]
    for s in table.sources:
        out.append(f"Source: {s.what}, {s.url} ({s.version}). Read: {s.transcription}.")
    out.append(f"Values in {table.units}; a published value may be {table.tolerance} from the "
               "number it stands for (\"at the edge\": outside the interval by no more).")
    return out


HEADER = ["cell", "run", "95% interval", "published", "difference",
          "published inside the interval?"]
LEGEND = ("difference: run minus published, in points; interval: the run's 95% interval; "
          "* the published cell has a note")


def cell_row(cell: CellLine, tolerance: float) -> list[str]:
    return [cell.column.label + (" *" if cell.note else ""), number(cell.run.value),
            interval(cell.run), number(cell.published), number(cell.difference, signed=True),
            cell.verdict(tolerance)]


def heading(run: RunReference) -> str:
    if run.published_model is None:
        return f"{run.label}: no published row"
    return (f"{run.label} beside {run.published_model} ({setting_text(run.row_setting)}), "
            f"matched by {run.matched_by}")


def to_markdown(report: ReferenceReport) -> str:
    lines = ["## Beside the published numbers", ""]
    if report.note:
        lines += [md_escape(report.note), ""]
    for run in report.runs:
        lines += [f"### {md_escape(heading(run))}", ""]
        if run.problem:
            lines += [md_escape(run.problem), ""]
        if run.cells:
            lines.append("| " + " | ".join(HEADER) + " |")
            lines.append("|---|" + "---:|" * 4 + "---|")
            for cell in run.cells:
                lines.append("| " + " | ".join(md_escape(c) for c in
                                               cell_row(cell, report.table.tolerance)) + " |")
            lines += ["", md_escape(LEGEND) + ".", ""]
        lines += [f"Compared as: {md_escape(run.compared_as)}.", ""]
        for cell in run.cells:
            if cell.note:
                lines.append(f"- \\* {md_escape(cell.column.label)}: "
                             f"{md_escape(cell.note)}")
        if run.not_run:
            lines.append("- Not in this run: " + md_escape("; ".join(run.not_run)))
        lines.append("- Differs from the published protocol:"
                     + ("" if run.differences else " nothing visioneval can see"))
        lines += [f"  - {md_escape(d)}" for d in run.differences]
        lines.append("")
    lines += [md_escape(line) for line in source_lines(report.table)]
    lines.append("")
    lines += [f"- {md_escape(n)}" for n in report.table.notes]
    return "\n".join(lines) + "\n"


def html_context(report: ReferenceReport) -> dict[str, Any]:
    """What templates/reference.html shows (the compare page's published section)."""
    tolerance = report.table.tolerance
    runs = [{"heading": heading(run), "problem": run.problem,
             "rows": [cell_row(cell, tolerance) for cell in run.cells],
             "compared_as": run.compared_as,
             "notes": [f"{c.column.label}: {c.note}" for c in run.cells if c.note],
             "not_run": "; ".join(run.not_run), "differences": list(run.differences)}
            for run in report.runs]
    return {"runs": runs, "header": HEADER, "legend": LEGEND, "note": report.note,
            "sources": source_lines(report.table), "notes": list(report.table.notes)}


def to_csv(report: ReferenceReport) -> str:
    buf = io.StringIO()
    writer = csvcells.writer(buf, lineterminator="\n")
    writer.writerow(["run", "published_model", "setting", "published_setting", "cell", "key",
                     "run", "ci95_low", "ci95_high", "published", "difference", "verdict",
                     "note"])
    for run in report.runs:
        for cell in run.cells:
            low, high = cell.run.ci95 or (None, None)
            writer.writerow([run.label, run.published_model, setting_text(run.setting),
                             setting_text(run.row_setting), cell.column.label,
                             cell.column.key, _plain(cell.run.value), _plain(low),
                             _plain(high), cell.published, _plain(cell.difference),
                             cell.verdict(report.table.tolerance), cell.note])
    return buf.getvalue()


def _plain(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"
