"""The report's section on a run's request variants (variants.json): the paired table, what
the model answered without the image, and a transport curve per metric for each kind of
variant that has a scale (JPEG quality, long side, scale factor)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from visioneval import fmt
from visioneval.core.blocks import Block, Charts, Items, Note, Section, Table
from visioneval.core.figures import AgainstReference, Axis, Reference, TestedPoint, Tick
from visioneval.core.marks import Interval
from visioneval.core.view import ReadableRun
from visioneval.variants import shown
from visioneval.variants.summary import VariantResult, VariantsSummary, read

TITLE = "Controls: the same samples, changed"


def sections(directory: Path) -> list[Section]:
    """The controls section of a run with variants ([] without); a variants.json that cannot
    be read is said in the section."""
    try:
        summary = read(directory)
    except ValueError as exc:
        return [Section(TITLE, [Note(str(exc))])]
    if summary is None:
        return []
    return [section(summary)]


def section(summary: VariantsSummary) -> Section:
    blocks: list[Block] = [
        Table(shown.HEADER, [row.cells() for row in shown.rows(summary)], numeric_from=2),
        Note(shown.NOTE)]
    lines = shown.without_image(summary)
    if lines:
        blocks.append(Items(lines))
    if summary.chance_rule and any(v.removes_image for v in summary.variants):
        blocks.append(Note(summary.chance_rule))
    curves = [chart for kind in _kinds_with_axis(summary.variants)
              for chart in transport_charts(kind)]
    if curves:
        blocks += [Charts(curves), Note(
            "Each point is one variant with its 95% bootstrap interval; the line and band are "
            "the stored images' value and interval on the same samples. A filled point "
            "differs significantly from the stored images (paired test at 5%).")]
    for variant in summary.variants:
        right = variant.answered_without_image
        if right is None or not right.count:
            continue
        more = f" (the first {right.ids_listed} listed; all are in variants.json)" \
            if right.ids_listed < right.count else ""
        blocks += [Note(f"Answered correctly {variant.name} ({right.metric}): {right.count} of "
                        f"{right.n} samples{more}. A model can answer these without the "
                        "image: candidates to leave out of a cleaner subset."),
                   Items(right.ids[:right.ids_listed])]
    return Section(TITLE, blocks)


def _kinds_with_axis(variants: Sequence[VariantResult]) -> list[list[VariantResult]]:
    kinds: dict[str, list[VariantResult]] = {}
    for v in variants:
        if v.axis is not None and v.axis_value is not None:
            kinds.setdefault(v.kind, []).append(v)
    return [sorted(found, key=lambda v: v.axis_value or 0.0) for found in kinds.values()]


def transport_charts(points: list[VariantResult]) -> list[AgainstReference]:
    """One chart per metric: the metric against the variant's scale."""
    metrics = list(dict.fromkeys(m.metric for v in points for m in v.metrics))
    return [curve(points, metric) for metric in metrics]


def curve(points: list[VariantResult], metric: str) -> AgainstReference:
    """The metric (percent) against the axis (log scale for sizes and factors), each point
    with its whisker; the stored images' value as a line with its band."""
    axis = points[0].axis or ""
    values = [v.axis_value or 0.0 for v in points]
    log = axis != "JPEG quality"
    lo, hi = _range(values, log)
    x = Axis(axis + (" (log scale)" if log else ""), 2 ** lo if log else lo,
             2 ** hi if log else hi, [Tick(v, f"{v:g}") for v in values],
             "log2" if log else "linear")
    found = next((m.original for v in points for m in v.metrics
                  if m.metric == metric and m.original is not None), None)
    stored = None if found is None else Reference(
        found.value, _pair(found.ci95), f"stored images: {fmt.pct(found.value)}% "
        f"[{fmt.interval(found.ci95, joiner=', ')}]" if found.ci95 else "", "stored")
    tested = []
    for v in points:
        result = next((m for m in v.metrics if m.metric == metric), None)
        if result is None or result.variant is None:
            continue
        test = result.versus_original
        tip = (f"{v.name}: {fmt.pct(result.variant.value)}%"
               + (f", {fmt.pct(test.difference, signed=True)} points against the stored "
                  f"images ({shown.test_text(test)}, "
                  f"{'significant' if test.significant else 'not significant'})"
                  if test else ""))
        tested.append(TestedPoint(v.axis_value or 0.0, result.variant.value,
                                  _pair(result.variant.ci95), test is not None and test.significant,
                                  tip))
    return AgainstReference(f"{metric} by {axis}", x, tested, stored)


def _pair(found: Sequence[float] | None) -> Interval | None:
    return None if not found else (found[0], found[1])


def _range(values: list[float], log: bool) -> tuple[float, float]:
    """The axis' ends, a little beyond the points (a single point centred)."""
    ends = ([math.log2(v) for v in values if v > 0] if log else values) or [0.0]
    low, high = min(ends), max(ends)
    pad = (high - low) * 0.08 if high > low else 1.0
    return low - pad, high + pad


def comparison_section(views: Sequence[ReadableRun]) -> Section | None:
    """`visioneval compare`'s controls: each run's variants against its own stored images,
    and per model what it answered without the image (None when no run has variants)."""
    found: list[tuple[str, VariantsSummary]] = []
    problems: list[str] = []
    for view in views:
        try:
            summary = read(view.directory)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if summary is not None:
            found.append((f"{view.model} ({view.directory.name})", summary))
    if not found and not problems:
        return None
    rows = [[label, *row.cells()] for label, summary in found for row in shown.rows(summary)]
    blocks: list[Block] = [Table(["run", *shown.HEADER], rows, numeric_from=3),
                           Note(shown.NOTE)]
    blind = [[label, v.name, m.metric, fmt.pct(m.variant.value),
              fmt.pct(m.chance.value) if m.chance else "-",
              fmt.pct(m.versus_chance.difference, signed=True) if m.versus_chance else "-",
              ("yes" if m.versus_chance.significant else "no") if m.versus_chance else "-",
              fmt.pct(m.original.value),
              f"{v.answered_without_image.count}/{v.answered_without_image.n}"
              if v.answered_without_image else "-"]
             for label, summary in found for v in summary.variants if v.removes_image
             for m in v.metrics if m.variant is not None and m.original is not None]
    if blind:
        blocks += [Table(["run", "variant", "metric", "without image", "chance",
                          "vs chance", "sig.", "with image", "right without image"],
                         blind, numeric_from=3),
                   Note("Answerable without the image: the score with every image removed "
                        "(blind) or blank, against what a uniform guess scores (where the "
                        "benchmark states chance; paired bootstrap, 95%) and against the "
                        "same samples with their images.")]
    blocks += [Note(p) for p in problems]
    return Section(TITLE, blocks)
