"""The chart template (`templates/chart.svg`), compiled once: the charts' own environment
with autoescaping on, so drawing a chart needs no page (and the page's environment, which
draws the charts of its sections, is not needed to draw one)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2


@cache
def chart_template() -> jinja2.Template:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined)
    return environment.get_template("chart.svg")
