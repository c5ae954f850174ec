"""The report's pages (run, compare, runs, suite, reference) from its templates on the one
skeleton (`visioneval.pages`), autoescaping on. Only our own CSS, scripts and charts (SVG
rendered from our own escaped template, or matplotlib's for histograms) pass as they are."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from visioneval import pages
from visioneval.report import drawing

TEMPLATES = Path(__file__).parent / "templates"
ASSETS = Path(__file__).parent / "assets"  # the report's own scripts and styles
CSS = pages.ASSETS / "report.css"  # every page's style
SORTABLE = pages.ASSETS / "sortable.js"  # tables that sort by a click on a column's head


@cache
def environment() -> jinja2.Environment:
    """One environment per process (templates are compiled once); `draw(chart)` draws a
    section's chart (`report.drawing`)."""
    env = pages.environment(TEMPLATES)
    env.globals["draw"] = drawing.draw
    return env


def render(template: str, **context: Any) -> str:
    """A page: `template` extends base.html, which needs `title`, `subtitle` and `css`
    (report.css unless given)."""
    context.setdefault("css", CSS.read_text())
    return environment().get_template(template).render(**context)
