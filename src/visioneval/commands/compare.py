"""`visioneval compare`: several runs of one benchmark in the paper's table layout (settings
that differ are flagged, not mixed), beside the published numbers with --reference, with
paired tests on the samples the runs share; --out writes the tables as files too."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from visioneval.commands.common import consoles, guarded, named_definition, warn_untrusted
from visioneval.core.rundir import load_all
from visioneval.epochs.compared import lines as epoch_lines
from visioneval.report import compare as comparison
from visioneval.report import paired
from visioneval.report.compare_console import show as show_comparison
from visioneval.report.reference import REFERENCES, beside_paper
from visioneval.report.reference_console import show_beside
from visioneval.terminal import line

if TYPE_CHECKING:
    from visioneval.core.rundir import OpenedRun
    from visioneval.report.reference import ReferenceReport


def compare(run_dirs: Sequence[Path], *, out: Path | None, common_only: bool,
            reference: str | None, reference_model: str | None,
            definition: str | None) -> int:
    """Print the comparison (and write it under `out`); exit 0, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        views = load_all(run_dirs, named_definition(definition))
        warn_untrusted(err, [view.untrusted for view in views])
        result = comparison.compare(views, common_only=common_only)
        published = _beside_published(views, reference, reference_model, common_only)
        for flag in result.flags:  # part of the comparison: wrapped like its notes
            line(err, f"warning: {flag}", style="yellow")
        show_comparison(result, console)
        if published is not None:
            show_beside(published, console)

        tests = paired.paired_comparisons(views)
        paired.show(tests, console)
        for sentence in epoch_lines([view.directory for view in views]):
            line(console, sentence)
        if out is not None:
            tested = paired.section(tests)
            for path in comparison.write(result, out, published,
                                         [tested] if tested is not None else []):
                line(console, f"wrote {path}")
            if any(t.results or t.unpaired for t in tests):
                path = paired.write_csv(tests, out / "paired.csv")
                line(console, f"wrote {path}")
        return 0

    return guarded(err, action)


def _beside_published(run_dirs: Sequence[Path | OpenedRun], reference: str | None,
                      reference_model: str | None, common_only: bool) -> ReferenceReport | None:
    """compare's --reference part (None when not asked)."""
    if reference is None:
        if reference_model is not None:
            raise ValueError("--reference-model needs --reference paper")
        return None
    if reference not in REFERENCES:
        raise ValueError(f"--reference {reference!r}: choose from {', '.join(REFERENCES)}")
    note = ("--common-only narrows the table above; the published comparison uses each "
            "run's own metrics (all its samples)") if common_only else ""
    return beside_paper(run_dirs, reference_model, note)
