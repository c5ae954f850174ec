"""A simulated observer with known psychometric functions, answering BlindTest's questions:
on a row whose task has a magnitude (magnitude.py) it is right with probability
ψ(level) = γ + (1 − γ − λ)·F(level; α, β) (Wichmann & Hill 2001, the Weibull F, γ the
task's guess rate), otherwise it gives one of the wrong answers uniformly; elsewhere it is
right. It answers in the format the paper's prompts ask for ("Yes"/"No", "{2}"), which
every protocol reads, so each protocol's fit should recover the same threshold. Used by
`measure/blindtest_threshold_recovery.py` and the tests to check the fits."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from visioneval.benchmarks.blindtest.benchmark import BlindTest
from visioneval.benchmarks.blindtest.magnitude import BY_TASK, Magnitude
from visioneval.benchmarks.blindtest.spec import LINES, TOUCHING
from visioneval.core.records import Record, Response, Sample
from visioneval.stats.psychometric import criterion_level, psi

INTERSECTIONS = ("0", "1", "2")  # [P] 2dline.ipynb: 0, 1 or 2 intersections


@dataclass(frozen=True)
class Curve:
    """One magnitude's psychometric function: scale α, slope β, lapse rate λ."""

    alpha: float
    beta: float
    lapse: float

    def threshold(self, magnitude: Magnitude, criterion: float = 0.75) -> float:
        """The true level where ψ reaches `criterion`."""
        found = criterion_level(criterion, self.alpha, self.beta, magnitude.guess,
                                self.lapse)
        assert found is not None, "the curve never reaches the criterion"
        return found


def answer(task: str, label: str, level: float | None, curve: Curve | None,
           rng: random.Random) -> str:
    """One answer in the paper's format: right with probability ψ(level)."""
    magnitude = BY_TASK.get(task)
    right = True
    if magnitude is not None and curve is not None and level is not None:
        p = psi(level, curve.alpha, curve.beta, magnitude.guess, curve.lapse)
        right = rng.random() < p
    if task == TOUCHING:
        said = label if right else ("No" if label.strip().lower() == "yes" else "Yes")
        return said
    if task == LINES:
        said = label if right else rng.choice([c for c in INTERSECTIONS if c != label])
        return "{" + said + "}"
    return label


def records(benchmark: BlindTest, curves: Mapping[str, Curve], seed: int
            ) -> Iterator[Record]:
    """Every sample of the benchmark answered by the observer and scored by the benchmark
    itself, as a run would record it. `curves`: by magnitude name (magnitude.py)."""
    rng = random.Random(seed)
    for sample in benchmark.samples():
        if not isinstance(sample, Sample):
            continue
        meta = sample.metadata
        task = str(meta["task"])
        magnitude = BY_TASK.get(task)
        curve = curves.get(magnitude.name) if magnitude is not None else None
        text = answer(task, sample.target["groundtruth"], meta.get("level"), curve, rng)
        parsed, scores = benchmark.score(sample, text)
        yield Record(id=sample.id, group=sample.group, target=sample.target,
                     response=Response(text=text), parsed=parsed, scores=scores,
                     metadata=meta)
