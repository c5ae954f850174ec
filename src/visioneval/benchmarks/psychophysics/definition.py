"""How psychophysics runs are built and shown: its options, its synthetic data, report
sections (sections.py), sample-browser rows and the `compare` table of thresholds."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval.benchmarks.psychophysics.metrics import PsychophysicsMetrics
from visioneval.benchmarks.psychophysics.options import PsychophysicsOptions
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import ComparisonTable, Section
from visioneval.core.headline import Headline
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun


class PsychophysicsDefinition(BenchmarkDefinition):
    name = "psychophysics"
    summary = ("Psychometric thresholds (orientation, colour, size), d′ and set-size "
               "effects of a model on controlled odd-one-out arrays.")
    options_model = PsychophysicsOptions
    metrics_model = PsychophysicsMetrics
    model_help = "Model name; builtin: popout."
    max_tokens = 16
    synth_help = ("Write the psychophysics stimuli: detection, presence and conjunction "
                  "arrays, 8 levels per feature.")
    synth_rows = 20  # trials per level and set size
    settings_that_matter = ("experiments", "num_samples", "criterion", "form")

    def make(self, options: BaseModel) -> Benchmark:
        from visioneval.benchmarks.psychophysics.benchmark import Psychophysics

        assert isinstance(options, PsychophysicsOptions)
        return Psychophysics(options)

    def benchmark_class(self) -> type[Benchmark]:
        from visioneval.benchmarks.psychophysics.benchmark import Psychophysics

        return Psychophysics

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.benchmarks.psychophysics.headline import headline

        return headline(metrics)

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset

        return [f"{out / experiment}: {n} rows" for experiment, n in
                write_dataset(out, Design(trials=rows), seed).items()]

    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.benchmarks.psychophysics.sections import sections

        return sections(view.metrics)

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """The thresholds with their intervals, slope and β; d′ at each yes/no condition's
        highest level."""
        from visioneval.benchmarks.psychophysics.tables import show_main

        show_main(view.metrics, f"{self.name}: {view.model}", console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.psychophysics.tables import show

        show(view.metrics, f"{self.name}: {view.model}", console)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable | None:
        from visioneval.benchmarks.psychophysics.sections import comparison

        return comparison(self.name, views)

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        block = record.scores.get("answer", {})
        ok = None if not record.scores else block.get("correct") == 1.0
        return {"t": str(record.target),
                "labels": [str(meta.get("experiment")), str(meta.get("feature"))],
                "v": {"answer": {"a": str(record.parsed.get("answer") or "(unparsed)"),
                                 "ok": ok}},
                "meta": f"level {meta.get('level')} {meta.get('unit', '')}, set size "
                        f"{meta.get('set_size')}"}

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        return metrics.get("n_unparsed")


DEFINITION = PsychophysicsDefinition()
