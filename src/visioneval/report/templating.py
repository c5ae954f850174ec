"""Every HTML page visioneval writes comes from one skeleton (`templates/base.html`) through
jinja2 with autoescaping on: a value from a run (a model name, an answer, a label) is text on
the page, never markup. Only our own CSS, scripts and charts (SVG
rendered from our own escaped template, or matplotlib's for layout pictures) pass as they
are."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).parent / "templates"
ASSETS = Path(__file__).parent / "assets"


@cache
def environment() -> jinja2.Environment:
    """One environment per process (templates are compiled once); `draw(chart)` draws a
    section's chart (`report.drawing`)."""
    from visioneval.report import drawing

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False,
                             keep_trailing_newline=True)  # a page is a text file: ends in \n
    env.globals["draw"] = drawing.draw
    return env


def render(template: str, **context: Any) -> str:
    """A page: `template` extends base.html, which needs `title`, `subtitle` and `css`
    (report.css unless given)."""
    context.setdefault("css", (ASSETS / "report.css").read_text())
    return environment().get_template(template).render(**context)
