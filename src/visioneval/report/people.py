"""`visioneval compare` with people among the runs (`--backend human`): each person's row
says so, a panel of several people gives the human range of every figure with each model
run's value set against it, and every two runs that answered the same stimuli get their
trial-by-trial error consistency (Cohen's κ on right and wrong, Geirhos, Meding & Wichmann
2020, `stats.error_consistency`): whether they err on the same trials, beyond what their
accuracies alone make likely."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from visioneval.core.blocks import Block, ComparisonTable, Items, Note, Section, Table
from visioneval.core.rundir import OpenedRun
from visioneval.metrics.paired_correctness import paired_correctness

PAIRS_SHOWN = 15  # the first runs' pairs: six runs
KAPPA_NOTE = ("κ = (c_obs − c_exp) / (1 − c_exp): c_obs the share of trials both got right or "
              "both wrong, c_exp what two independent observers of the same accuracies "
              "would share (Geirhos, Meding & Wichmann 2020). 0: errors on unrelated "
              "trials; 1: errors on the same trials. 95% interval: bootstrap over trials, "
              "half a trial added to each cell (docs/error-consistency.md).")


def is_person(view: OpenedRun) -> bool:
    return view.info.backend.kind == "human"


def sections(views: Sequence[OpenedRun], table: ComparisonTable) -> list[Section]:
    """The panel's range and the error consistency, when a person's run is compared ([]
    otherwise); each person's row in `table` is marked as one."""
    if not any(is_person(v) for v in views):
        return []
    people = {v.directory for v in views if is_person(v)}
    for row, run in zip(table.rows, table.runs, strict=False):
        if run.directory in people:
            row[0] = f"{row[0]} (person)"
    out = []
    panel = _panel(table, people)
    if panel is not None:
        out.append(panel)
    out.append(_consistency(views))
    return out


def _panel(table: ComparisonTable, people: set) -> Section | None:
    """Per figure, the lowest and highest of the people's values, and each model run's
    value beside that range."""
    mine = [i for i, run in enumerate(table.runs) if run.directory in people]
    others = [i for i in range(len(table.rows)) if i not in mine]
    if len(mine) < 2:
        return None
    header = ["figure", f"people ({len(mine)})", *[table.rows[i][0] for i in others]]
    rows = []
    for col in range(2, len(table.header)):
        values = [v for i in mine if (v := _number(table.rows[i][col])) is not None]
        if len(values) < 2:
            continue
        low, high = min(values), max(values)
        cells = [f"{low:.3g} to {high:.3g}"]
        for i in others:
            v = _number(table.rows[i][col])
            cells.append("-" if v is None else f"{v:.3g} " + (
                "(within)" if low <= v <= high else "(below)" if v < low else "(above)"))
        rows.append([table.header[col], *cells])
    if not rows:
        return None
    return Section("People as a panel", [
        Table(header, rows, numeric_from=1),
        Note("The people's range: the lowest and highest of their values, each person's own "
             "run; a model's value is within, below or above it.")])


def _consistency(views: Sequence[OpenedRun]) -> Section:
    """κ for every two runs (the first PAIRS_SHOWN pairs)."""
    rows, said = [], []
    pairs = list(itertools.combinations(views, 2))
    for a, b in pairs[:PAIRS_SHOWN]:
        paired = paired_correctness(a, b)
        found = paired.consistency()
        name = f"{_name(a)} · {_name(b)}"
        if found.kappa is None:
            rows.append([name, str(found.n), _share(found.accuracy_a),
                         _share(found.accuracy_b), "-", "-"])
            said.append(f"{name}: {_named(found.reason or '', a, b)}")
            continue
        low, high = found.interval or (math.nan, math.nan)
        rows.append([name, str(found.n), _share(found.accuracy_a), _share(found.accuracy_b),
                     f"{found.kappa:.2f}", f"{low:.2f} to {high:.2f}"])
        if found.note:
            said.append(f"{name}: {_named(found.note, a, b)}")
    if len(pairs) > PAIRS_SHOWN:
        said.append(f"{len(pairs) - PAIRS_SHOWN} more pairs not shown: compare fewer runs")
    blocks: list[Block] = [Table(["runs", "trials", "right (first)", "right (second)", "κ",
                     "95% interval"], rows, numeric_from=1), Note(KAPPA_NOTE)]
    if said:
        blocks.insert(1, Items(said))
    return Section("Error consistency: do they err on the same trials?", blocks)


def _named(sentence: str, a: OpenedRun, b: OpenedRun) -> str:
    """The statistic's "observer a" and "observer b" said as the runs' names."""
    return sentence.replace("observer a", _name(a)).replace("observer b", _name(b))


def _name(view: OpenedRun) -> str:
    return f"{view.info.backend.model}{' (person)' if is_person(view) else ''}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _number(cell: str) -> float | None:
    try:
        return float(cell.replace("%", "").split()[0])
    except (ValueError, IndexError):
        return None
