"""`visioneval reference`: a benchmark's published numbers (the paper's, or its authors'
leaderboard) with their source, version and what each number means."""

from __future__ import annotations

from visioneval.commands.common import consoles, guarded
from visioneval.core import registry
from visioneval.report.reference import published_table, unknown_model
from visioneval.report.reference_console import show_published


def reference(benchmark: str, model: str | None) -> int:
    """The published table, or one model's rows (any spelling); exit 0, or 2 with one line
    (a benchmark without published numbers, a model the table does not have)."""
    console, err = consoles()

    def action() -> int:
        table = published_table(registry.definition(benchmark))
        chosen = None
        if model is not None:
            chosen = table.find_model(model)
            if chosen is None:
                raise unknown_model(table, model, "--model")
        show_published(table, console, chosen)
        return 0

    return guarded(err, action)
