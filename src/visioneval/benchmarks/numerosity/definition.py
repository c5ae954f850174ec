"""`visioneval numerosity`: how its runs are built and shown (the shared paradigm
definition)."""

from __future__ import annotations

from visioneval.paradigms.definition import ParadigmDefinition


class NumerosityDefinition(ParadigmDefinition):
    name = "numerosity"
    summary = ("Numerosity: which of two boxes has more dots, at ratios 1.08 to 3, under "
               "equal dot size and equal total area (the Weber fraction w).")
    benchmark_path = "visioneval.benchmarks.numerosity.benchmark:NumerosityBenchmark"
    synth_rows = 16


DEFINITION = NumerosityDefinition()
