"""The questions, in one place: SalBench's Detection question (the P3 three-way choice,
chance 1/3) and the yes/no question of target-present/absent arrays."""

from __future__ import annotations

from visioneval.benchmarks.psychophysics.params import CHOICE_EXPERIMENTS
from visioneval.benchmarks.salbench.synth import QUESTION_D

DETECTION = QUESTION_D
YES_NO = "Is one object different from the others? Answer yes or no."


def question(experiment: str) -> str:
    return DETECTION if experiment in CHOICE_EXPERIMENTS else YES_NO


def answer(experiment: str, feature: str, target_present: bool) -> str:
    """The correct answer: the differing feature, or yes/no."""
    if experiment in CHOICE_EXPERIMENTS:
        return feature
    return "yes" if target_present else "no"
