"""The crowding benchmark: the shared paradigm benchmark with the crowding stimulus."""

from __future__ import annotations

from visioneval.benchmarks.crowding.paradigm import Crowding
from visioneval.paradigms.benchmark import ParadigmBenchmark


class CrowdingBenchmark(ParadigmBenchmark):
    name = "crowding"
    paradigm = Crowding()
