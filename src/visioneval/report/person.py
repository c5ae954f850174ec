"""A person's run (`--backend human`): who answered, how fast, under which procedure and on
what display, beside the benchmark's tables in the report and in `visioneval show`."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from visioneval.core.blocks import Items, Section
from visioneval.metrics.person_display import PersonDisplay, read
from visioneval.terminal import line

TITLE = "The person and the display"


def sections(directory: Path) -> list[Section]:
    """The section of a person's run ([] for a model's)."""
    found = read(directory)
    return [] if found is None else [Section(TITLE, [Items(found.lines())])]


def show(found: PersonDisplay, console: Console) -> None:
    line(console, TITLE, style="bold")
    for sentence in found.lines():
        line(console, sentence)
