"""`--target-ci W`: stop a run once the headline's anytime-valid 95% interval is at most W
percentage points wide. `StoppingRule` is what was asked (recorded in run.json);
`SequentialStop` is the rule at work, fed each journaled record's headline outcome by its
position in the seeded order (`engine/order.py`), and says when no new sample need be sent.

Outcomes are taken in the order's sequence, not as answers arrive: a slow answer (often a
long, wrong one) would otherwise come late and bias the first n. An answer that arrives
ahead of a slower one waits (at most the samples in flight) until the ones before it are in.
A failed request has no outcome and is passed over, as it is left out of the headline."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from visioneval.core.benchmark import Benchmark
from visioneval.core.capabilities import LearnsFromAnswers
from visioneval.core.idset import IdValues
from visioneval.core.records import Record
from visioneval.core.runfiles import StoppingInfo
from visioneval.stats.sequential import BettingConfidenceSequence

DEFAULT_MIN_SAMPLES = 100
LEVEL = 0.95

Outcome = Callable[[Record], float | None]
"""A record's headline outcome in [0, 1] (1 right, 0 wrong), or None when it does not count
(a failed request, a control row): `Benchmark.headline_outcome`."""


@dataclass(frozen=True)
class StoppingRule:
    """What `--target-ci` asked: `width` in percentage points, `min_samples` before any
    stop, the order's `seed`."""

    width: float
    min_samples: int = DEFAULT_MIN_SAMPLES
    seed: int = 0
    level: float = LEVEL

    def __post_init__(self) -> None:
        if not 0 < self.width <= 100:
            raise ValueError(f"--target-ci must be more than 0 and at most 100 percentage "
                             f"points, not {self.width}")
        if self.min_samples < 1:
            raise ValueError(f"--min-samples must be at least 1, not {self.min_samples}")


@dataclass(frozen=True)
class StoppingFlags:
    """--target-ci and --min-samples as one command line gave them (None: not given)."""

    width: float | None = None
    min_samples: int | None = None

    def rule(self, seed: int = 0) -> StoppingRule | None:
        """A new run's rule (None without --target-ci; --min-samples alone is a ValueError)."""
        if self.width is None:
            if self.min_samples is not None:
                raise ValueError("--min-samples goes with --target-ci (the samples before "
                                 "the stopping rule may stop the run)")
            return None
        return StoppingRule(self.width, self.min_samples or DEFAULT_MIN_SAMPLES, seed)


def refusal(benchmark: object) -> str | None:
    """Why `benchmark` cannot be stopped by --target-ci, in one line; None: it can."""
    name = getattr(benchmark, "name", "") or "this benchmark"
    if not isinstance(benchmark, Benchmark) or benchmark.headline_proportion() is None:
        return (f"--target-ci: {name}'s main number is not a proportion of samples, so no "
                "confidence sequence for a bounded mean fits it; run it without --target-ci")
    if isinstance(benchmark, LearnsFromAnswers):
        return (f"--target-ci: {name} chooses its next requests from the answers so far, so "
                "its samples cannot be taken in a random order; run it without --target-ci")
    return None


class SequentialStop:
    """The rule over one run: outcomes by position -> the confidence sequence -> whether
    the run has its answer. `segments`: (n, width) from which each width tuned the bets
    (a resume with a smaller --target-ci adds one; the earlier observations keep the bets
    they were made with, so the sequence stays the one a single run would have made)."""

    def __init__(self, rule: StoppingRule, outcome: Outcome,
                 segments: list[tuple[int, float]] | None = None,
                 stopped_at: int | None = None, proportion: str = "accuracy"):
        self.rule = rule
        self.outcome = outcome
        self.proportion = proportion
        self.segments = segments or [(0, rule.width)]
        self.stopped_at = stopped_at
        self.sequence = BettingConfidenceSequence(rule.level, width=self.segments[0][1] / 100)

        self.recorded = IdValues("d")  # outcomes of samples answered before (NaN: none)
        self.failed: set[str] = set()  # samples whose last request failed: sent again
        self._waiting: dict[int, tuple[float | None, bool]] = {}  # by position: (outcome,
        # whether this session observed it)
        self._next = 0
        self._new_width: float | None = None  # a resume's narrower width, not yet in force

    @classmethod
    def resumed(cls, info: StoppingInfo, outcome: Outcome, width: float | None = None,
                min_samples: int | None = None) -> SequentialStop:
        """The rule a run recorded, with a --target-ci (or --min-samples) given again."""
        rule = StoppingRule(width if width is not None else info.target_ci,
                            min_samples if min_samples is not None else info.min_samples,
                            info.seed, info.level)
        segments = [(int(n), float(w)) for n, w in info.segments]
        stopped_at = info.stopped_at if info.stopped else None
        found = cls(rule, outcome, segments, stopped_at, info.proportion)
        if rule.width != segments[-1][1]:  # a new width: the rule has not stopped for it
            found.stopped_at = None
            found._new_width = rule.width  # from the first outcome this session adds
        return found

    def remember(self, record: Record) -> None:
        """A record answered in an earlier session, fed when its position comes."""
        value = self.outcome(record) if record.ok else None
        self.recorded.add(record.id, math.nan if value is None else value)

    def remember_failed(self, sample_id: str) -> None:
        """A sample whose request failed in an earlier session: sent again, even once the
        rule is satisfied (a failed request is an error to retry, not an answer)."""
        self.failed.add(sample_id)

    def resumed_sample(self, position: int, sample_id: str) -> None:
        value = self.recorded.get(sample_id)
        self._take(position, None if value is None or math.isnan(value) else float(value),
                   False)

    def sends(self, sample_id: str) -> bool | None:
        """Whether a sample not yet answered is sent: True while the rule is not satisfied
        or when its earlier request failed; False to pass it by while failed ones may
        follow; None when nothing more is to be sent (the producer stops reading)."""
        if sample_id in self.failed:
            self.failed.discard(sample_id)
            return True
        if not self.satisfied:
            return True
        return False if self.failed else None

    def observe(self, position: int, record: Record) -> None:
        """A record just journaled, at its position in the order."""
        self._take(position, self.outcome(record) if record.ok else None, True)

    def _take(self, position: int, value: float | None, new: bool) -> None:
        self._waiting[position] = (value, new)
        while self._next in self._waiting:
            found, observed = self._waiting.pop(self._next)
            self._next += 1
            if found is None:
                continue
            n = self.sequence.n
            if observed and self._new_width is not None:
                # A narrower width tunes the bets from here on: the outcomes already seen
                # keep the bets they were made with, wherever the last session ended.
                self.segments = [*self.segments, (n, self._new_width)]
                self._new_width = None
            for start, width in self.segments:
                if start == n:
                    self.sequence.width = width / 100
            self.sequence.add(found)
            if self.stopped_at is None and self._narrow_enough():
                self.stopped_at = self.sequence.n

    def _narrow_enough(self) -> bool:
        return self.sequence.n >= self.rule.min_samples and \
            self.sequence.interval().width <= self.rule.width / 100

    @property
    def satisfied(self) -> bool:
        """Whether the run has its answer: no new sample need be sent."""
        return self.stopped_at is not None

    def info(self, total: int | None = None) -> StoppingInfo:
        """run.json's `stopping`: the rule, whether and where it stopped, the interval."""
        interval = self.sequence.interval()
        return StoppingInfo(
            method=self.sequence.method, target_ci=self.rule.width, level=self.rule.level,
            min_samples=self.rule.min_samples, seed=self.rule.seed,
            stopped=self.stopped_at is not None, stopped_at=self.stopped_at,
            n=interval.n, samples=total, proportion=self.proportion, estimate=interval.mean,
            ci=[interval.low, interval.high],
            segments=list(self.segments))
