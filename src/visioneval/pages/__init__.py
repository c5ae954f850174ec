"""The one skeleton every HTML page visioneval writes comes from (`templates/base.html`,
`assets/report.css`, the table sorter `assets/sortable.js`), under jinja2 with autoescaping
on: a value from a run (a model name, an answer, a label) is text on the page, never
markup. Below every page's maker (report/, canvas/'s pictures page), each of which adds its
own templates folder."""

from __future__ import annotations

from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"
ASSETS = Path(__file__).parent / "assets"


def environment(templates: Path) -> jinja2.Environment:
    """An environment that finds `templates`' files, then the skeleton's."""
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(templates),
                                    jinja2.FileSystemLoader(TEMPLATES)]),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=False,
        keep_trailing_newline=True)  # a page is a text file: ends in \n
