"""A layout run's report sections: the summary per variant (with the link to the pictures
when `--viz` drew them) and the distribution of every headline metric (CANVAS's and the
added non-saturating scores side by side) first, then what was skipped, failed or absent
and why. The page around them (counts, time, configuration, sample browser) is every run's
(`report.page`)."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.layout import tables
from visioneval.canvas.report import DISTRIBUTED
from visioneval.core.blocks import Block, Charts, Link, Note, Section, Table
from visioneval.core.figures import Histogram, Histograms
from visioneval.core.view import ReadableRun


def sections(view: ReadableRun) -> list[Section]:
    variants = _variants(view)
    samples = list(tables.run_samples(view.directory, view.info))
    summary = _summary(view.metrics.get("summary") or {}, variants)
    summary.blocks.append(_viz_link(view))
    distributions = Section("Distributions", [
        Note("One panel per metric, one colour per variant; CANVAS's metrics first, then "
             "the scores that cannot reach 1.0 without overlap (IoU ≥ 0.5 F1, block match, "
             "...)."), _distributions(samples, variants)])
    return [summary, distributions, _problems(view, samples, variants)]


def terminal_sections(view: ReadableRun) -> list[Section]:
    """What `visioneval show` prints after the summary: what was skipped, failed or absent,
    and where the pictures are (the distributions are charts: on the page only)."""
    problems = _problems(view, list(tables.run_samples(view.directory, view.info)),
                         _variants(view))
    return [Section(problems.title, [*problems.blocks, _viz_link(view)])]


def _variants(view: ReadableRun) -> list[str]:
    given = view.info.options.get("variants")
    found = list(view.metrics.get("summary") or {})
    if isinstance(given, list):
        return [str(v) for v in given] + [v for v in found if v not in given]
    return found


def _viz_link(view: ReadableRun) -> Block:
    index = view.directory / tables.VIZ_DIR / "index.html"
    if not index.exists():
        return Note("No pictures: run `visioneval layout ... --viz` to draw them.")
    href = f"{tables.VIZ_DIR}/index.html"
    return Link(href, href, "Per-sample pictures and a sortable table: ")


def _summary(summary: dict[str, Any], variants: list[str]) -> Section:
    keys = [k for k in DISTRIBUTED if any(k in summary.get(v, {}) for v in variants)]
    rows = []
    for key in keys:
        row = [key]
        for variant in variants:
            stats = summary.get(variant, {}).get(key)
            row += ["-", "-", "0"] if not stats else \
                [f"{stats['mean']:.4f}", f"{stats['median']:.4f}", str(stats["count"])]
        rows.append(row)
    header = ["metric", *[f"{v} {s}" for v in variants for s in ("mean", "median", "n")]]
    return Section("Summary", [Table(header, rows)])


def _distributions(samples: list[dict[str, Any]], variants: list[str]) -> Block:
    keys = [k for k in DISTRIBUTED if any(isinstance(s.get(k), int | float) for s in samples)]
    if not keys:
        return Note("No metric values.")
    return Charts([Histograms([
        Histogram(key, [(variant, [s[key] for s in samples if s.get("variant") == variant
                                   and isinstance(s.get(key), int | float)])
                        for variant in variants])
        for key in keys])])


def _problems(view: ReadableRun, samples: list[dict[str, Any]], variants: list[str]) -> Section:
    rows = [[f"{s['variant']}/{s['id']}", s["reason"]]
            for s in tables.skipped_pairs(view.info, variants)]
    rows += [[f"{s['variant']}/{s['id']}", f"{k}: {v}"]
             for s in tables.ordered(samples, variants) for k, v in s.items()
             if k.endswith("_error")]
    absent: dict[str, int] = {}
    for sample in samples:
        for key, reason in (sample.get("absent") or {}).items():
            absent[f"{key}: {reason}"] = absent.get(f"{key}: {reason}", 0) + 1
    blocks: list[Block] = []
    errors = view.metrics.get("samples_with_metric_error", 0)
    if rows:
        blocks.append(Note(f"{errors} sample(s) with a metric error: its other metrics are "
                           "still counted; a skipped pair has no record."))
        blocks.append(Table(["pair or sample", "problem"], rows, numeric_from=99))
    if absent:
        blocks.append(Table(["absent metric and reason", "samples"],
                            [[k, n] for k, n in sorted(absent.items())]))
    missing = tables.missing_ids(view.info)
    if missing:
        blocks.append(Note(f"--ids that match no pair: {', '.join(map(str, missing))}."))
    return Section("Skipped, errors and absent values",
                   blocks or [Note("Every pair was scored.")])
