"""`visioneval touching`: how its runs are built and shown (the shared paradigm definition)."""

from __future__ import annotations

from visioneval.paradigms.definition import ParadigmDefinition


class TouchingDefinition(ParadigmDefinition):
    name = "touching"
    summary = ("Touching circles (BlindTest, made parametric): the gap between two circles a "
               "model needs to tell a separated pair from a touching one (threshold in px).")
    benchmark_path = "visioneval.benchmarks.touching.benchmark:TouchingBenchmark"
    synth_rows = 18


DEFINITION = TouchingDefinition()
