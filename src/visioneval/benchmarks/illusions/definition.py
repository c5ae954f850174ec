"""`visioneval illusions`: how its runs are built and shown (the shared paradigm
definition)."""

from __future__ import annotations

from visioneval.paradigms.definition import ParadigmDefinition


class IllusionsDefinition(ParadigmDefinition):
    name = "illusions"
    summary = ("Geometric illusions (Müller-Lyer, Ebbinghaus, Ponzo) against their controls: "
               "PSE and JND in % of the standard, and each illusion's strength.")
    benchmark_path = "visioneval.benchmarks.illusions.benchmark:IllusionsBenchmark"
    synth_rows = 16  # trials per level, as the design has them


DEFINITION = IllusionsDefinition()
