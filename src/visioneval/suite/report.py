"""A suite's results: for each benchmark, its runs in the benchmark's comparison table (the
paper's layout where it has one, as `visioneval compare` draws it) with the published numbers
beside them where they are shipped; then every run's status. One page (suite.html), one CSV
(suite.csv, long: a row per benchmark, run and column) and the same tables in the terminal."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from visioneval.core import rundir
from visioneval.core.blocks import ComparisonTable
from visioneval.core.capabilities import HasPublished
from visioneval.core.store import write_atomic
from visioneval.io import csvcells
from visioneval.report import compare, templating
from visioneval.report import reference as published
from visioneval.report.compare import table_context
from visioneval.report.compare_console import show as show_comparison
from visioneval.report.reference_console import show_beside
from visioneval.suite.execute import RunOutcome
from visioneval.suite.plan import PlannedRun, SuitePlan
from visioneval.terminal import line

if TYPE_CHECKING:
    from visioneval.core.benchmark import BenchmarkDefinition
    from visioneval.core.rundir import OpenedRun
    from visioneval.report.reference import ReferenceReport

HAS_RESULTS = ("finished", "finished with errors", "done before")


@dataclass(frozen=True)
class Part:
    """One benchmark's comparison in the suite (no table: `problem` says why)."""

    title: str
    table: ComparisonTable | None = None
    reference: dict[str, Any] | None = None  # reference.html's context
    beside: ReferenceReport | None = None  # the runs beside their published rows
    problem: str = ""

    @property
    def drawn(self) -> dict[str, Any]:
        """The table as the compare page draws it (heads, cells over intervals, marks)."""
        assert self.table is not None
        return table_context(self.table)


def parts(plan: SuitePlan, outcomes: list[RunOutcome]) -> list[Part]:
    """A comparison per benchmark of the runs that have results."""
    out = []
    for name, runs in plan.by_benchmark().items():
        title = runs[0].benchmark_label
        done = [o.run for o in outcomes if o.run.benchmark == name and o.status in HAS_RESULTS
                and (o.run.directory / "metrics.json").is_file()]
        if not done:
            out.append(Part(title, problem="no run of this benchmark has results (see the "
                                           "runs below)"))
            continue
        named = done[0].definition() if done[0].spec.definition else None
        views = rundir.load_all([r.directory for r in done], named)
        table = compare.compare(views)
        reference, shown = None, None
        if isinstance(views[0].shown, HasPublished):
            try:
                beside = _beside_published(done, views, named)
            except ValueError as exc:
                table.notes.append(f"Published numbers: {exc}")
            else:
                if any(r.cells for r in beside.runs):
                    reference, shown = published.html_context(beside), beside
                else:
                    table.notes.append(
                        "Published numbers: no model of the suite matches a model of the "
                        f"published table (known: {', '.join(beside.table.model_names())}); "
                        "a model's `published_as` in the suite file names the one to show "
                        "its runs beside.")
        out.append(Part(title, table, reference, shown))
    return out


def _beside_published(done: list[PlannedRun], views: list[OpenedRun],
                      named: BenchmarkDefinition | None) -> ReferenceReport:
    """Each run beside its published row: a model's `published_as` names the published
    model, else its own model name is matched."""
    groups: dict[str | None, list[OpenedRun]] = {}
    for run, view in zip(done, views, strict=True):
        groups.setdefault(run.model.published_as, []).append(view)
    reports = [published.beside_paper(group, name, definition_named=named,
                                      named_by="the suite file's published_as")
               for name, group in groups.items()]
    beside = [r for report in reports for r in report.runs]
    matched = [r for r in beside if r.cells]
    unmatched = [r.model for r in beside if not r.cells]
    note = (f"Not beside a published row (no published model of that name; a suite file's "
            f"published_as names one): {', '.join(dict.fromkeys(unmatched))}."
            if matched and unmatched else "")
    return replace(reports[0], runs=tuple(matched or beside), note=note)


def write(plan: SuitePlan, outcomes: list[RunOutcome], found: list[Part]) -> list[Path]:
    """suite.html and suite.csv in the suite's folder."""
    plan.out.mkdir(parents=True, exist_ok=True)
    page = templating.render("suite.html", title=f"suite {plan.name}",
                             subtitle=f"{plan.out} · {len(outcomes)} runs · "
                                      f"{_counts(outcomes)}",
                             parts=found, runs=[_row(o, plan.out) for o in outcomes])
    files = {"suite.html": page, "suite.csv": to_csv(found)}
    for name, text in files.items():
        write_atomic(plan.out / name, text.encode("utf-8"))
    return [plan.out / name for name in files]


def to_csv(found: list[Part]) -> str:
    """Long form, so benchmarks with different tables share one file: benchmark, the row's
    two naming columns, the run directory, the column and the value."""
    buf = io.StringIO()
    writer = csvcells.writer(buf, lineterminator="\n")
    writer.writerow(["benchmark", "model", "setting", "run", "column", "value"])
    for part in found:
        table = part.table
        if table is None:
            continue
        runs = [str(v.directory) for v in table.runs] if len(table.runs) == len(table.rows) \
            else [""] * len(table.rows)
        for row, run in zip(table.rows, runs, strict=True):
            for column, value in zip(table.header[2:], row[2:], strict=False):
                writer.writerow([part.title, row[0], row[1], run, column, value])
    return buf.getvalue()


def show(console: Console, outcomes: list[RunOutcome], found: list[Part]) -> None:
    """The tables and each run's status, in the terminal: each benchmark's comparison as
    `visioneval compare` draws it, what differs between its runs said once, the published
    rows beside it."""
    for part in found:
        console.print()
        if part.table is None:
            line(console, f"{part.title}: {part.problem}")
            continue
        for flag in part.table.flags:
            line(console, f"warning: {flag}", style="yellow")
        show_comparison(part.table, console, title=part.title, page="suite.html")
        if part.beside is not None:
            show_beside(part.beside, console)
    console.print()
    line(console, "Runs", style="bold")
    for o in outcomes:
        detail = f" ({o.records} samples, {o.errors} errors" + \
            (f"; {o.message})" if o.message else ")") if o.status != "failed" else \
            f": {o.message}"
        line(console, f"- {o.run.label}: {o.status}{detail} -> {o.run.directory}")


def _row(outcome: RunOutcome, out: Path) -> dict[str, Any]:
    page = outcome.run.directory / "report.html"
    css = {"finished": "ok", "done before": "ok", "finished with errors": "warn",
           "failed": "bad"}.get(outcome.status, "")
    return {"label": outcome.run.label, "status": outcome.status, "css": css,
            "message": outcome.message, "records": outcome.records, "errors": outcome.errors,
            "directory": str(outcome.run.directory),
            "page": os.path.relpath(page, out) if page.is_file() else None}


def _counts(outcomes: list[RunOutcome]) -> str:
    tally: dict[str, int] = {}
    for o in outcomes:
        tally[o.status] = tally.get(o.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in tally.items())
