"""`visioneval graphical`: how its runs are built and shown (the shared paradigm
definition)."""

from __future__ import annotations

from visioneval.paradigms.definition import ParadigmDefinition


class GraphicalDefinition(ParadigmDefinition):
    name = "graphical"
    summary = ("Graphical perception (Cleveland & McGill 1984): the percentage one marked "
               "chart element is of another, per encoding (position, length, angle, area, "
               "shading); midmean log2 error and the encodings' order beside people's.")
    benchmark_path = "visioneval.benchmarks.graphical.benchmark:GraphicalBenchmark"
    synth_rows = 10


DEFINITION = GraphicalDefinition()
