"""`visioneval crowding`: how its runs are built and shown (the shared paradigm definition)."""

from __future__ import annotations

from visioneval.paradigms.definition import ParadigmDefinition


class CrowdingDefinition(ParadigmDefinition):
    name = "crowding"
    summary = ("Crowding: the spacing of four flanking Landolt Cs at which a model stops "
               "reading the middle C's gap (critical spacing in target diameters and px).")
    benchmark_path = "visioneval.benchmarks.crowding.benchmark:CrowdingBenchmark"
    synth_rows = 18


DEFINITION = CrowdingDefinition()
