"""The contrast benchmark: the shared paradigm benchmark with the contrast-detection
stimulus."""

from __future__ import annotations

from visioneval.benchmarks.contrast.paradigm import ContrastDetection
from visioneval.paradigms.benchmark import ParadigmBenchmark


class ContrastBenchmark(ParadigmBenchmark):
    name = "contrast"
    paradigm = ContrastDetection()
