"""`visioneval compare`: several runs of one benchmark in one table, the one its definition
draws (`BenchmarkDefinition.comparison`: a paper's table layout where there is one).

Runs are never silently mixed: a difference in the settings the benchmark says matter, in
the dataset's parts or content, or in generation settings is listed as a flag above the
table, and so are different sample sets, with their sizes and overlap. `common_only`
compares on the samples every run has: each run's metrics are recomputed from its
journal's records of those samples, by its benchmark's own `summarize` (the benchmark
rebuilt from run.json, as `visioneval report` does)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from visioneval.core import registry
from visioneval.core.blocks import (
    Cards,
    Charts,
    ComparisonTable,
    Items,
    Link,
    Note,
    Section,
    Table,
)
from visioneval.core.rundir import OpenedRun, load_all
from visioneval.core.store import RunDirError, write_atomic
from visioneval.epochs.family import rebuilt
from visioneval.io import csvcells
from visioneval.report import people, templating, variants
from visioneval.report import reference as published
from visioneval.report.cost import cost_column
from visioneval.report.markdown import md_escape

if TYPE_CHECKING:
    from visioneval.report.reference import ReferenceReport




def compare(directories: Sequence[Path | OpenedRun], common_only: bool = False,
            definition: registry.Named = None) -> ComparisonTable:
    views = load_all(directories, definition)
    kinds = {v.benchmark for v in views}
    if len(kinds) > 1:
        raise ValueError(f"these runs are of different benchmarks ({', '.join(sorted(kinds))}); "
                         "compare runs of one benchmark at a time")
    shown = views[0].shown
    narrowed = on_common_samples(views) if common_only else None
    result = shown.comparison(narrowed or views) or answered_table(narrowed or views)
    result.flags = flags(views, shown.settings_that_matter, narrowed)
    controls = variants.comparison_section(views)
    if controls is not None:
        result.sections.append(controls)
    if result.runs and len(result.runs) == len(result.rows):
        result.sections.extend(people.sections(views, result))
        _name_alike_runs(result)
        _add_cost(result, common_only)
    return result


def _name_alike_runs(result: ComparisonTable) -> None:
    """Rows of different runs that the table names alike (one model, one setting: the
    paper's layout names a row by model and shots) get their run directory beside the
    model, so every row says which run it is."""
    names: dict[tuple[str, str], set[Path]] = {}
    for row, run in zip(result.rows, result.runs, strict=True):
        names.setdefault((row[0], row[1]), set()).add(run.directory)
    for row, run in zip(result.rows, result.runs, strict=True):
        if len(names[(row[0], row[1])]) > 1:
            row[0] = f"{row[0]} ({run.directory.name})"


def _add_cost(result: ComparisonTable, common_only: bool) -> None:
    """The results table's Cost column: each row's run's."""
    cells, notes = cost_column([run.info for run in result.runs],
                               [row[0] for row in result.rows], whole_runs_only=common_only)
    result.header.append("Cost")
    result.higher_is_better.append(False)
    for row, cell in zip(result.rows, cells, strict=True):
        row.append(cell)
    result.notes += notes


def answered_table(views: Sequence[OpenedRun]) -> ComparisonTable:
    """The table of a benchmark that has none of its own, or whose definition is not known
    (a run of a user's own benchmark whose definition was not named): the share of each
    run's samples that got an answer."""
    rows = []
    for view in views:
        total = errors = 0
        for record in view.iter_records():
            total += 1
            errors += not record.ok
        share = f"{100 * (total - errors) / total:.1f}" if total else "-"
        rows.append([view.model, view.directory.name, share])
    untrusted = any(v.untrusted for v in views)
    note = ("Answered: samples with an answer rather than an error. The benchmark's own "
            "table needs its definition, which visioneval does not import from a run "
            "directory: name it with --definition if you trust it.") if untrusted else \
        ("Answered: samples with an answer rather than an error (this benchmark has no "
         "comparison table of its own).")
    return ComparisonTable(views[0].benchmark, ["Model", "Run", "Answered %"], rows, [True],
                           runs=list(views), notes=[note])


def _ids(view: OpenedRun) -> set[str]:
    return {record.id for record in view.iter_records()}


def on_common_samples(views: list[OpenedRun]) -> list[OpenedRun]:
    """Each run narrowed to the samples every run has, its metrics recomputed from those
    records by its own benchmark's `summarize`."""
    common = set.intersection(*map(_ids, views))
    if not common:
        raise ValueError("--common-only: the runs have no sample in common ("
                         + "; ".join(f"{_label(v)}: {len(_ids(v))} samples" for v in views)
                         + ")")
    narrowed = []
    for view in views:
        narrow = replace(view, only=frozenset(common))
        if view.untrusted is not None:  # no benchmark to recompute with: counts only
            narrowed.append(narrow)
            continue
        try:
            benchmark = rebuilt(view.shown.build_to_read(dict(view.info.options)), view.info,
                                view.shown)
        except (ValueError, OSError, RunDirError) as exc:
            raise ValueError(f"--common-only recomputes each run's metrics with its benchmark, "
                             f"which could not be rebuilt for {view.directory}: {exc}") from None
        narrowed.append(replace(narrow, metrics=benchmark.summarize(narrow.iter_records())))
    return narrowed


def flags(views: list[OpenedRun], settings: Sequence[str] = (),
          narrowed: list[OpenedRun] | None = None) -> list[str]:
    """What differs between the runs besides the model, and would change the numbers:
    the benchmark's `settings` that matter, data, samples, generation, failures.
    `narrowed`: the same runs on their common samples (--common-only)."""
    out = []
    for key in settings:
        values = {_label(v): v.info.options.get(key) for v in views}
        if len({repr(x) for x in values.values()}) > 1:
            out.append(f"{key} differs: " + "; ".join(f"{k}: {x}" for k, x in values.items()))
    out += _dataset_flags(views)
    out += _sample_set_flags(views, narrowed)
    gens = {_label(v): v.info.generation.model_dump(exclude_unset=True) for v in views}
    if len({repr(g) for g in gens.values()}) > 1:
        out.append("generation settings differ: "
                   + "; ".join(f"{k}: {g}" for k, g in gens.items()))
    errors = [f"{_label(v)}: {n} failed samples" for v in narrowed or views
              if (n := sum(1 for r in v.iter_records() if not r.ok))]
    if errors:
        out.append("some runs have failed samples, left out of their scores: " + "; ".join(errors))
    return out


def _dataset_flags(views: list[OpenedRun]) -> list[str]:
    """Different parts of one dataset (configs, subsets) are named as such; only the same
    parts with different content are "not the same data"."""
    prints = {_label(v): (v.info.dataset.fingerprint or "")[:12] for v in views}
    if len(set(prints.values())) <= 1:
        return []
    parts = {_label(v): list(v.info.dataset.files or {}) for v in views}
    if all(parts.values()) and len({tuple(sorted(p)) for p in parts.values()}) > 1:
        sources = {v.info.dataset.source for v in views}
        where = f" (same source {sources.pop()})" if len(sources) == 1 else ""
        return [f"dataset parts differ{where}: "
                + "; ".join(f"{k}: {', '.join(p)}" for k, p in parts.items())]
    return ["dataset fingerprint differs (not the same data): "
            + "; ".join(f"{k}: {x}" for k, x in prints.items())]


def _sample_set_flags(views: list[OpenedRun], narrowed: list[OpenedRun] | None) -> list[str]:
    ids = {_label(v): _ids(v) for v in views}
    if len({frozenset(i) for i in ids.values()}) <= 1:
        return []
    common = set.intersection(*ids.values())
    if narrowed is not None:
        return [f"compared on the {len(common)} samples common to all runs (--common-only): "
                + "; ".join(f"{k}: {len(common)} of {len(i)}" for k, i in ids.items())]
    return ["sample sets differ: " + "; ".join(f"{k}: {len(i)} samples" for k, i in ids.items())
            + f"; {len(common)} in common to all runs (--common-only compares on those)"]


def _label(view: OpenedRun) -> str:
    return f"{view.model} ({view.directory.name})"


def to_csv(result: ComparisonTable) -> str:
    buf = io.StringIO()
    writer = csvcells.writer(buf, lineterminator="\n")
    writer.writerow(result.header)
    writer.writerows(result.rows)
    return buf.getvalue()




def to_markdown(result: ComparisonTable, reference: ReferenceReport | None = None) -> str:
    best = result.best()
    lines = [f"> {md_escape(flag)}" for flag in result.flags] + ([""] if result.flags else [])
    lines.append("| " + " | ".join(map(md_escape, result.header)) + " |")
    lines.append("|" + "|".join("---" if i < 2 else "---:" for i in range(len(result.header)))
                 + "|")
    for row in result.rows:
        cells = [f"**{md_escape(c)}**" if result.is_best(row, i, best) else
                 (md_escape(c) if c else "-") for i, c in enumerate(row)]
        lines.append("| " + " | ".join(cells) + " |")
    for note in [*result.mark_notes(intervals_shown=False), *result.notes]:
        lines += ["", md_escape(note)]
    for section in result.sections:
        lines += ["", *section_markdown(section)]
    text = "\n".join(lines) + "\n"
    if reference is not None:  # --reference: the published rows beside each run

        text += "\n" + published.to_markdown(reference)
    return text


def section_markdown(section: Section) -> list[str]:
    """A section beside the table as Markdown lines: its title, tables, notes and lists;
    a chart is drawn only on the page, so the text says how many and where."""
    lines = [f"## {md_escape(section.title)}"]
    for block in section.blocks:
        lines.append("")
        if isinstance(block, Table):
            lines.append("| " + " | ".join(map(md_escape, block.header)) + " |")
            lines.append("|" + "|".join("---:" if i >= block.numeric_from else "---"
                                        for i in range(len(block.header))) + "|")
            lines += ["| " + " | ".join(md_escape(c) if c not in ("", None) else "-"
                                        for c in row) + " |" for row in block.rows]
        elif isinstance(block, Note):
            lines.append(md_escape(block.text))
        elif isinstance(block, Items):
            lines += [f"- {md_escape(item)}" for item in block.items]
        elif isinstance(block, Charts):
            count = len(block.charts)
            lines.append(f"({count} chart{'s' if count != 1 else ''} on the compare page, "
                         "comparison.html)")
        elif isinstance(block, Link):
            lines.append(f"{md_escape(block.before)}{md_escape(block.text)} "
                         f"({md_escape(block.href)})")
        elif isinstance(block, Cards):
            lines += [f"- {md_escape(label)}: {md_escape(value)}"
                      for label, value in block.cards]
    return lines


@dataclass(frozen=True)
class HeadCell:
    """A column head on the page: a run of columns sharing a first part ("Detection_NAT F1",
    "Detection_NAT EM") gets one head over them and its second parts below."""
    text: str
    span: int = 1  # columns
    rows: int = 1  # header rows


@dataclass(frozen=True)
class PageCell:
    text: str
    interval: str = ""  # the value's 95% interval, under it
    numeric: bool = False
    best: bool = False


def shown_columns(result: ComparisonTable) -> list[int]:
    """The page's columns: every one but a number column no run has a value in (a part of
    the paper's layout none of the runs ran); the note under the table names those."""
    return [c for c in range(len(result.header))
            if c < 2 or any(row[c] not in ("", "-", None) for row in result.rows)]


def header_rows(labels: list[str]) -> list[list[HeadCell]]:
    """One header row, or two when neighbouring columns share a first part: the shared part
    spans them and each keeps its last word below (a narrower table)."""
    parts = [label.rsplit(" ", 1) if " " in label else [label] for label in labels]
    top: list[HeadCell] = []
    below: list[HeadCell] = []
    i = 0
    while i < len(labels):
        j = i
        while (j + 1 < len(labels) and len(parts[i]) == 2 and len(parts[j + 1]) == 2
               and parts[j + 1][0] == parts[i][0]):
            j += 1
        if j > i:
            top.append(HeadCell(parts[i][0], span=j - i + 1))
            below += [HeadCell(parts[k][1]) for k in range(i, j + 1)]
        else:
            top.append(HeadCell(labels[i], rows=2))
        i = j + 1
    if not below:
        return [[HeadCell(label) for label in labels]]
    return [top, below]


def page_rows(result: ComparisonTable, columns: list[int]) -> list[list[PageCell]]:
    best = result.best()
    return [[PageCell(row[c] or "-", _interval_text(result.interval(r, c)), c >= 2,
                      result.is_best(row, c, best)) for c in columns]
            for r, row in enumerate(result.rows)]


def _interval_text(span: tuple[float, float] | None) -> str:
    return "" if span is None else f"{span[0]:.1f}–{span[1]:.1f}"


def to_html(result: ComparisonTable, reference: ReferenceReport | None = None) -> str:
    return templating.render("comparison.html", title=f"{result.benchmark} comparison",
                             subtitle=f"{len(result.rows)} rows", **table_context(result),
                             reference=_reference_context(reference) if reference else None)


def table_context(result: ComparisonTable) -> dict[str, Any]:
    """What `comparison_table.html` draws of a table: its heads, its cells (each value over
    its interval, the marked ones bold) and the notes (the compare page, a suite's page)."""
    columns = shown_columns(result)
    left_out = [result.header[c] for c in range(len(result.header)) if c not in columns]
    notes = result.mark_notes(intervals_shown=True)
    if left_out:
        notes.append("Left out here (no run has a value; comparison.csv and comparison.md "
                     f"keep them): {', '.join(left_out)}.")
    return {"table": result, "heads": header_rows([result.header[c] for c in columns]),
            "rows": page_rows(result, columns), "mark_notes": notes}


def _reference_context(reference: ReferenceReport) -> dict[str, object]:
    return published.html_context(reference)


def write(result: ComparisonTable, out: Path, reference: ReferenceReport | None = None,
          extra: Sequence[Section] = ()) -> list[Path]:
    """comparison.csv, .md and .html in `out`; `extra`: sections for the two pages only,
    after the table's own (the paired tests, which the terminal shows its own way)."""
    if extra:
        result = replace(result, sections=[*result.sections, *extra])
    out.mkdir(parents=True, exist_ok=True)
    files = {"comparison.csv": to_csv(result), "comparison.md": to_markdown(result, reference),
             "comparison.html": to_html(result, reference)}
    if reference is not None:
        files["reference.csv"] = published.to_csv(reference)
    for name, text in files.items():
        write_atomic(out / name, text.encode("utf-8"))
    return [out / name for name in files]
