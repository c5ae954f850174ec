"""The graphical-perception benchmark: the shared paradigm benchmark with its charts."""

from __future__ import annotations

from visioneval.benchmarks.graphical.paradigm import Graphical
from visioneval.paradigms.benchmark import ParadigmBenchmark


class GraphicalBenchmark(ParadigmBenchmark):
    name = "graphical"
    paradigm = Graphical()
