"""How layout runs (CANVAS's layout-generation metrics) are built and shown: report
sections, sample-browser rows. Its command `visioneval layout` is generated from its options
with CANVAS's flag spellings (commandline.py); the run is the engine's like any other."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from visioneval.benchmarks.layout.commandline import COMMAND_LINE
from visioneval.benchmarks.layout.options import LayoutOptions
from visioneval.benchmarks.layout.tables import KEY, LayoutMetrics, show
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.blocks import Section
from visioneval.core.headline import Headline
from visioneval.core.printed import print_sections
from visioneval.core.records import Record
from visioneval.core.view import ReadableRun

BROWSED = ("canvas_fill", "pixel_fidelity", "semantic_match", "layout_overlap", "mean_iou",
           "alignment_f1", "iou50_f1", "block_match", "tool_efficiency")
"""The metrics a sample's row in the report's browser names."""

log = logging.getLogger("visioneval.canvas")


class LayoutDefinition(BenchmarkDefinition):
    name = "layout"
    summary = ("Score generated UI layouts against the ground truth (CANVAS): canvas fill, "
               "SSIM, semantic match, IoU matching, alignment, tool usage, and scores that "
               "do not saturate.")
    settings_that_matter = ("variants", "ids", "skip_semantic", "semantic_from",
                            "caption_backend", "caption_model", "caption_prompt", "embedder")
    # The captioner is the run's judge model: a resume names its server and key again.
    judge_target = ("caption_base_url", "caption_api_key_env")
    options_model = LayoutOptions
    metrics_model = LayoutMetrics
    command_line = COMMAND_LINE  # CANVAS's flag spellings; no model under test

    def make(self, options: BaseModel) -> Benchmark[Any]:
        from visioneval.benchmarks.layout.benchmark import build

        assert isinstance(options, LayoutOptions)
        return build(options)

    def from_command(self, options: BaseModel) -> Benchmark[Any]:
        """The run's benchmark; an --ids entry with no sample is named (the others run)."""
        benchmark = self.build(options)
        for gid in benchmark.collection.missing_ids:  # type: ignore[attr-defined]
            log.warning("--ids %s: no such sample", gid)
        return benchmark

    def headline(self, metrics: dict[str, Any]) -> Headline:
        """The first of CANVAS's metrics (`DISTRIBUTED`' order) the first variant has: its
        mean over the samples that have it. CANVAS reports means alone, so there is no
        interval."""
        from visioneval.canvas.report import DISTRIBUTED

        summary = metrics.get("summary") or {}
        variants = [v for v, table in summary.items() if isinstance(table, dict)]
        if not variants:
            return Headline("mean", percent=False, unavailable="no variant was scored")
        table = summary[variants[0]]
        key = next((k for k in DISTRIBUTED if isinstance(table.get(k), dict)), None)
        more = f"; +{len(variants) - 1} variants" if len(variants) > 1 else ""
        if key is None:
            return Headline(f"mean, {variants[0]}{more}", percent=False,
                            unavailable="no metric was computed")
        stats = table[key]
        return Headline(f"{key} mean, {variants[0]}{more}", stats.get("mean"), None,
                        stats.get("count"), percent=False,
                        interval_unavailable="CANVAS reports means without an interval")

    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.benchmarks.layout.sections import sections

        return sections(view)

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        """Per variant, each headline metric's mean with its 95% interval."""
        show(view.metrics, str(view.info.options.get("model") or view.model), console)

    def print_tables(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.layout.sections import terminal_sections
        self.print_main_table(view, console)
        print_sections(terminal_sections(view), console)

    def browser_row(self, record: Record) -> dict[str, Any]:
        """The pair, its headline metrics as the answer, its errors and absent metrics as
        the raw response; the label is the variant."""
        values = record.parsed.get(KEY) or {}
        shown = " · ".join(f"{k} {_fmt(values[k])}" for k in BROWSED if k in values)
        problems = [f"{k}: {v}" for k, v in values.items() if k.endswith("_error")]
        problems += [f"{k} absent: {v}" for k, v in (values.get("absent") or {}).items()]
        every = ", ".join(f"{k} {_fmt(v)}" for k, v in values.items()
                          if isinstance(v, int | float) and not isinstance(v, bool))
        return {"t": f"{record.metadata.get('variant', record.group)}/"
                     f"{record.metadata.get('id', record.target)}",
                "labels": [record.group],
                "v": {"layout": {"a": shown or "(no metric)", "ok": None}},
                "meta": str(record.metadata.get("folder", "")),
                "r": "\n".join([every, *problems])}


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


DEFINITION = LayoutDefinition()
