"""The illusions benchmark: the shared paradigm benchmark with the three illusions."""

from __future__ import annotations

from visioneval.benchmarks.illusions.paradigm import Illusions
from visioneval.paradigms.benchmark import ParadigmBenchmark


class IllusionsBenchmark(ParadigmBenchmark):
    name = "illusions"
    paradigm = Illusions()
