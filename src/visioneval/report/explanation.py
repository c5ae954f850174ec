"""The report's section on why a run's number differs from the paper's (explanation.json,
written by `visioneval explain`): the waterfall chart and its table per protocol."""

from __future__ import annotations

from pathlib import Path

from visioneval.core.blocks import Note, Section
from visioneval.harness import waterfall


def sections(directory: Path) -> list[Section]:
    """The section of a run `visioneval explain` has explained ([] otherwise); a file that
    cannot be read is said in the section."""
    try:
        found = waterfall.read(directory)
    except ValueError as exc:
        return [Section("Why your number differs from the paper's", [Note(str(exc))])]
    return [waterfall.section(found)] if found else []
