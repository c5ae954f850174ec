"""`visioneval contrast`: how its runs are built and shown (the shared paradigm definition),
with the contrast sensitivity function drawn from the curves together."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the
# chart and its tables load on first use.

from __future__ import annotations

from rich.console import Console

from visioneval.core.blocks import Section
from visioneval.core.view import ReadableRun
from visioneval.paradigms.definition import ParadigmDefinition


class ContrastDefinition(ParadigmDefinition):
    name = "contrast"
    summary = ("Contrast detection: the Michelson contrast a model needs to find a Gabor "
               "patch, per spatial frequency, and the contrast sensitivity function.")
    benchmark_path = "visioneval.benchmarks.contrast.benchmark:ContrastBenchmark"
    synth_rows = 12  # the paradigm's trials per level

    def sections(self, view: ReadableRun) -> list[Section]:
        from visioneval.benchmarks.contrast.shown import csf_section

        found = super().sections(view)
        extra = csf_section(view.metrics)
        return [*found[:1], extra, *found[1:]] if extra else found

    def print_main_table(self, view: ReadableRun, console: Console) -> None:
        from visioneval.benchmarks.contrast.shown import resolution_lines
        from visioneval.terminal import line

        super().print_main_table(view, console)
        for said in resolution_lines(view.metrics):
            line(console, said)


DEFINITION = ContrastDefinition()
