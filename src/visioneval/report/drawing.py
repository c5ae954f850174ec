"""The one drawer per chart kind (`core.figures`): a benchmark's sections hold what a chart
shows, this turns it into inline SVG on the page (the templates call `draw`). Every label is
escaped by the chart template."""

from __future__ import annotations

from markupsafe import Markup

from visioneval.core import figures
from visioneval.report import charts, linecharts, waterfall


def svg(chart: figures.Chart) -> str:
    """The chart as an <svg> element."""
    if isinstance(chart, figures.GroupedBars):
        return charts.grouped_bars(
            chart.categories, {s.name: s.values for s in chart.series}, chart.title,
            chart.ylabel, chart.ymax,
            intervals={s.name: s.intervals for s in chart.series if s.intervals is not None}
            or None)
    if isinstance(chart, figures.StackedShares):
        return charts.stacked_bars(chart.categories, {p.name: p.percents for p in chart.parts},
                                   chart.title, chart.xlabel, charts.share_colours(chart.parts))
    if isinstance(chart, figures.CountMatrix):
        return charts.heatmap(chart.rows, chart.columns, chart.counts, chart.title,
                              chart.xlabel, chart.ylabel)
    if isinstance(chart, figures.RateBars):
        return charts.evaluator_bars(chart.labels, chart.rates, chart.title, chart.intervals)
    if isinstance(chart, figures.Psychometric):
        return linecharts.psychometric(chart)
    if isinstance(chart, figures.Lines):
        return linecharts.lines(chart)
    if isinstance(chart, figures.Scatter):
        return linecharts.scatter(chart)
    if isinstance(chart, figures.AgainstReference):
        return linecharts.against_reference(chart)
    if isinstance(chart, figures.Waterfall):
        return waterfall.waterfall(chart)
    from visioneval.report import mplsvg  # matplotlib: only a page with histograms pays it

    return mplsvg.histograms(chart)


def draw(chart: figures.Chart) -> Markup:
    """The chart for a template: our own SVG, its labels already escaped."""
    return Markup(svg(chart))  # drawn by chart.svg, which escapes every label
