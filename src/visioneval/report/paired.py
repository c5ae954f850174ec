"""`visioneval compare`'s paired tests: each run against the first, on the metrics its
benchmark pairs (`capabilities.PairsRecords`), streamed from the journals."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from visioneval.core import blocks, registry
from visioneval.core.capabilities import PairsRecords
from visioneval.core.printed import print_table
from visioneval.core.rundir import OpenedRun, load_all
from visioneval.core.store import write_atomic
from visioneval.epochs.item_means import item_rows
from visioneval.io import csvcells
from visioneval.stats.paired import WILD_CLUSTER, PairedCollector, PairedResult, paired
from visioneval.terminal import line


@dataclass
class PairedComparison:
    first: str
    other: str
    results: list[PairedResult] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)


def _collect(view: OpenedRun) -> PairedCollector:
    definition = view.shown
    collector = PairedCollector()
    if not isinstance(definition, PairsRecords):  # nothing to pair (the generic definition)
        return collector
    if view.info.epochs:  # each item's mean over its answers
        for item, rows in item_rows(view.iter_records(epochs=True), definition):
            collector.add(item, rows)
        return collector
    for record in view.iter_records():
        if record.ok:
            collector.add(record.id, definition.paired_rows(record))
    return collector


def paired_comparisons(directories: Sequence[Path | OpenedRun],
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
    """Each comparison's tests: the values, the difference and the test's figure; the detail
    lines (discordant pairs, images) go to the pages and paired.csv (`--out`)."""
    for item in comparisons:
        if not item.results and not item.unpaired:
            continue
        if item.results:
            console.print()
            print_table(console, f"Paired tests: {item.other} against {item.first} (same "
                                 "samples)", ["metric", "first", "this", "diff.", "test"],
                        [[r.key, f"{100 * r.a:.1f}", f"{100 * r.b:.1f}",
                          f"{100 * r.difference:+.1f}", _figure(r)] for r in item.results],
                        NOTE, text=(4,))
            for r in item.results:
                if r.note:
                    line(console, f"{r.key}: {r.note}")
        if item.unpaired:
            line(console, f"compared without pairing ({item.other} and {item.first} were not "
                          f"scored on the same samples): {', '.join(item.unpaired)}")


NOTE = ("* significant at 5%. test: McNemar's exact p (on a pooled metric, the wild cluster "
        "bootstrap-t's p over images, Webb weights), else the paired bootstrap's 95% interval "
        "of the difference "
        "(points). With --out, the comparison page, comparison.md and paired.csv have each "
        "test's discordant pairs and images.")


def _figure(result: PairedResult) -> str:
    """The test's figure as the terminal shows it: "McNemar p 0.003 *"."""
    mark = " *" if result.significant else ""
    if result.p_value is not None:
        name = "wild cluster-t" if result.test == WILD_CLUSTER else "McNemar"
        return f"{name} p {_p_or_interval(result)}{mark}"
    if result.interval is not None:
        return f"bootstrap {_p_or_interval(result)}{mark}"
    return f"no test: {result.detail}"


def _p_or_interval(result: PairedResult) -> str:
    """The test's p ("0.003"), else the bootstrap's interval of the difference in points
    ("[-7.6, -5.1]"), else "-"."""
    if result.p_value is not None:
        return f"{result.p_value:.3g}"
    if result.interval is not None:
        low, high = result.interval
        return f"[{100 * low:+.1f}, {100 * high:+.1f}]"
    return "-"


SECTION_NOTE = ("Each run after the first against the first, sample by sample, on the metrics "
                "its benchmark pairs. p: McNemar's exact test on the samples right in one run "
                "only (0/1 outcomes); on a pooled metric (several answers about one image) "
                "the wild cluster bootstrap-t over images with Webb's weights (999 seeded "
                "resamples; docs/intervals.md). Otherwise the 95% "
                "interval of the difference by a paired bootstrap (1000 seeded resamples), in "
                "points. sig.: significant at 5%. Metrics the runs did not score on the same "
                "samples are listed as compared without pairing.")


def _detail(result: PairedResult) -> str:
    """The detail line, with the few-images note when there is one."""
    return f"{result.detail}; {result.note}" if result.note else result.detail


def section(comparisons: list[PairedComparison]) -> blocks.Section | None:
    """The tests as a section of the comparison page and comparison.md (None: no test)."""
    rows = []
    unpaired = []
    for item in comparisons:
        for r in item.results:
            rows.append([Path(item.other).name, r.key, r.test, _detail(r),
                         f"{100 * r.a:.1f}",
                         f"{100 * r.b:.1f}", f"{100 * r.difference:+.1f}", _p_or_interval(r),
                         "yes" if r.significant else "no"])
        if item.unpaired:
            unpaired.append(f"{Path(item.other).name} against {Path(item.first).name}: "
                            f"{', '.join(item.unpaired)}")
    if not rows and not unpaired:
        return None
    first = Path(comparisons[0].first).name
    parts: list[blocks.Block] = []
    if rows:
        parts.append(blocks.Table(["run", "metric", "test", "detail", first, "this run", "diff.",
                                   "p or diff. 95%", "sig."], rows, numeric_from=4))
    parts.append(blocks.Note(SECTION_NOTE))
    if unpaired:
        parts.append(blocks.Note("Compared without pairing (not scored on the same samples): "
                                 + "; ".join(unpaired) + "."))
    return blocks.Section(f"Paired tests against {first}", parts)


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
                             r.significant, _detail(r)])
        for key in item.unpaired:
            writer.writerow([item.first, item.other, key, "not paired (different samples)",
                             "", "", "", "", "", "", "", ""])
    write_atomic(path, buf.getvalue().encode("utf-8"))
    return path
