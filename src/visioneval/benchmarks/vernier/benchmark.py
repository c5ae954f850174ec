"""The Vernier benchmark: the shared paradigm benchmark with the Vernier stimulus."""

from __future__ import annotations

from visioneval.benchmarks.vernier.paradigm import Vernier
from visioneval.paradigms.benchmark import ParadigmBenchmark


class VernierBenchmark(ParadigmBenchmark):
    name = "vernier"
    paradigm = Vernier()
