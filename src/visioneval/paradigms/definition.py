"""How a paradigm's runs are built and shown, shared: its options, its synthetic data
(`visioneval data synth-NAME`), the terminal tables, the report's sections, the sample
browser's rows and `compare`. A paradigm's folder subclasses `ParadigmDefinition` once,
naming its benchmark class."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the
# fits, tables and stimuli load on first use.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel
from rich.console import Console

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import ComparisonTable, Section
from visioneval.core.headline import Headline
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun
from visioneval.paradigms.metrics import ParadigmMetrics
from visioneval.paradigms.options import ParadigmOptions


class ParadigmDefinition(BenchmarkDefinition):
    """`benchmark_path`: "module:Class" of the paradigm's benchmark, imported on first use."""

    benchmark_path: ClassVar[str] = ""
    options_model = ParadigmOptions
    metrics_model = ParadigmMetrics
    model_help = "Model name; builtin: reader (reads the pixels), random."
    max_tokens = 16
    synth_rows = 0  # 0: the paradigm's own trials per level
    settings_that_matter = ("conditions", "num_samples")

    @property
    def synth_help(self) -> str:
        return (f"Write {self.name}'s stimuli: every condition's levels, the paradigm's "
                "trials per level (--n: trials per level instead).")

    def benchmark_class(self) -> type[Benchmark]:
        import importlib  # the benchmark's module, named by `benchmark_path`

        module, _, name = self.benchmark_path.partition(":")
        found = getattr(importlib.import_module(module), name)
        assert isinstance(found, type) and issubclass(found, Benchmark)
        return found

    def make(self, options: BaseModel) -> Benchmark:
        return self.benchmark_class()(options)

    def synth(self, out: Path, rows: int, seed: int) -> list[str]:
        from visioneval.paradigms.dataset import write_dataset
        from visioneval.paradigms.paradigm import Design

        paradigm = self.benchmark_class().paradigm  # type: ignore[attr-defined]
        written = write_dataset(paradigm, out, Design(trials=rows or None), seed)
        return [f"{out / name}: {n} rows" for name, n in written.items()]

    def headline(self, metrics: dict[str, Any]) -> Headline:
        from visioneval.paradigms.headline import headline

        return headline(metrics)

    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.paradigms.sections import sections

        return sections(view.metrics)

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        from visioneval.paradigms.tables import show_main

        show_main(view.metrics, f"{self.name}: {view.model}", console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.paradigms.tables import show

        show(view.metrics, f"{self.name}: {view.model}", console)

    def comparison(self, views: Sequence[ReadableRun]) -> ComparisonTable | None:
        from visioneval.paradigms.sections import comparison

        return comparison(self.name, views)

    def browser_row(self, record: Record) -> dict[str, Any]:
        meta = record.metadata
        block = record.scores.get("answer", {})
        if "out_of_range" in block:  # an estimate: a number, its error, no right or wrong
            answer = record.parsed.get("answer")
            said = ("(unparsed)" if answer is None else f"{answer:g}" +
                    (" (out of range)" if block.get("out_of_range") == 1.0 else ""))
            error = block.get("error")
            return {"t": str(record.target), "labels": [str(meta.get("condition"))],
                    "v": {"answer": {"a": said, "ok": None}},
                    "meta": f"true {meta.get('level')} {meta.get('unit', '')}" + (
                        f", log2 error {error:.2f}" if isinstance(error, float) else "")}
        ok = None if "correct" not in block else block["correct"] == 1.0
        return {"t": str(record.target or "(none: level 0)"),
                "labels": [str(meta.get("condition"))],
                "v": {"answer": {"a": str(record.parsed.get("answer") or "(unparsed)"),
                                 "ok": ok}},
                "meta": f"level {_level(meta.get('level'))} {meta.get('unit', '')}"}

    def unparsed(self, metrics: dict[str, Any]) -> int | None:
        return metrics.get("n_unparsed")


def _level(value: Any) -> str:
    """A level as a reader writes it: 1.0833 rather than 1.0833333333333333."""
    return f"{value:.5g}" if isinstance(value, int | float) else str(value)
