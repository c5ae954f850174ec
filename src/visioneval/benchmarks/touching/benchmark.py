"""The touching-circles benchmark: the shared paradigm benchmark with its stimulus."""

from __future__ import annotations

from visioneval.benchmarks.touching.paradigm import Touching
from visioneval.paradigms.benchmark import ParadigmBenchmark


class TouchingBenchmark(ParadigmBenchmark):
    name = "touching"
    paradigm = Touching()
