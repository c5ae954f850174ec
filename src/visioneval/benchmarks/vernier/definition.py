"""`visioneval vernier`: how its runs are built and shown (the shared paradigm definition)."""

from __future__ import annotations

from visioneval.paradigms.definition import ParadigmDefinition


class VernierDefinition(ParadigmDefinition):
    name = "vernier"
    summary = ("Vernier acuity: the offset between two line segments a model needs to tell "
               "left from right (PSE and JND in pixels and segment lengths).")
    benchmark_path = "visioneval.benchmarks.vernier.benchmark:VernierBenchmark"
    synth_rows = 18


DEFINITION = VernierDefinition()
