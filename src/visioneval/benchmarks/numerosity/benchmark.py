"""The numerosity benchmark: the shared paradigm benchmark with the dot-array stimulus."""

from __future__ import annotations

from visioneval.benchmarks.numerosity.paradigm import Numerosity
from visioneval.paradigms.benchmark import ParadigmBenchmark


class NumerosityBenchmark(ParadigmBenchmark):
    name = "numerosity"
    paradigm = Numerosity()
