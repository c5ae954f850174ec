"""The report's section on a run's repeated answers (epochs.json): the item means beside the
first answers, the variance split and what it means, as the terminal says it
(`epochs.shown`)."""

from __future__ import annotations

from pathlib import Path

from visioneval.core.blocks import Block, Items, Note, Section, Table
from visioneval.epochs import shown
from visioneval.epochs.summary import EpochsSummary, read

TITLE = "Repeated answers: how much of the interval is the model's answer variation"


def sections(directory: Path) -> list[Section]:
    """The section of a run with --epochs ([] without); an epochs.json that cannot be read
    is said in the section."""
    try:
        summary = read(directory)
    except ValueError as exc:
        return [Section(TITLE, [Note(str(exc))])]
    return [] if summary is None else [section(summary)]


def section(summary: EpochsSummary) -> Section:
    found = shown.shown(summary)
    blocks: list[Block] = [Note(found.title), Table(list(found.header), found.rows,
                                                     numeric_from=1),
                           Items(found.sentences),
                           Note("The benchmark's own tables above are those of the first "
                                "answers, as the published protocol asks each item once. "
                                "Variances are of a 0/1 answer (a right answer 1); the "
                                "intervals draw whole items (or whole images, when items "
                                "share one), 1000 times.")]
    return Section(TITLE, blocks)
