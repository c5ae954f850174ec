"""Adaptive placement inside a run (`--method adaptive`): the detection experiment's trials
become slots, and a Psi-method track per feature (Kontsevich & Tyler 1999;
`stats/adaptive.py`) chooses each slot's level when the slot starts, from the answers so
far. The slot then asks one stored stimulus at that level that no other trial of the run
has used, so every trial is still a stimulus of the dataset (its PNG and row), and the
same maximum-likelihood fit reads the counts per level at the end.

The engine keeps many requests in flight, so a slot is placed from the answers that have
arrived, not yet from those pending (the batch form of the method: concurrent slots of a
track go to the same best level until answers move it, or its stimuli run out). The levels
tried therefore depend on the order answers arrive; the fit does not (the likelihood of
the answers is the same whatever chose the levels)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.psychophysics.params import POOL_FOLDER
from visioneval.core.records import Record, Request, Response, Sample
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.solver import Ask, Solved
from visioneval.io import parquet
from visioneval.stats.adaptive import PsiTrack
from visioneval.stats.psychometric import Sigmoid

GUESS = 1 / 3  # one of orientation, color, size
Scorer = Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict]]]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PoolEntry:
    """A stored detection stimulus: its row in the experiment's files and its parameters."""

    row: int
    feature: str
    level: float


@dataclass
class FeatureTrack:
    """One feature's adaptive track over its unused stored stimuli."""

    feature: str
    psi: PsiTrack
    unused: dict[float, set[int]]  # level: rows not yet asked
    pending: int = 0

    @classmethod
    def over(cls, feature: str, entries: Iterable[PoolEntry], form: Sigmoid) -> FeatureTrack:
        unused: dict[float, set[int]] = {}
        for entry in entries:
            unused.setdefault(entry.level, set()).add(entry.row)
        return cls(feature, PsiTrack(list(unused), GUESS, form), unused)

    def left(self) -> int:
        return sum(len(rows) for rows in self.unused.values())

    def take(self) -> PoolEntry:
        """The next trial's stimulus: at the most informative level that still has one, its
        lowest unused row. ValueError when none is left."""
        allowed = [bool(self.unused[float(level)]) for level in self.psi.candidates]
        if not any(allowed):
            raise ValueError(f"no {self.feature} stimulus left to ask")
        level = self.psi.propose(1, allowed)[0]
        row = min(self.unused[level])
        self.unused[level].discard(row)
        self.pending += 1
        return PoolEntry(row, self.feature, level)

    def give_back(self, entry: PoolEntry) -> None:
        """A trial whose request failed: its stimulus is unused again (a resume asks it)."""
        self.unused[entry.level].add(entry.row)
        self.pending -= 1

    def drop(self, entry: PoolEntry) -> None:
        """A stimulus that cannot be sent: used up, never asked."""
        self.pending -= 1

    def answered(self, entry: PoolEntry, correct: bool) -> None:
        self.pending -= 1
        self.psi.record(entry.level, correct)

    def learn(self, entry: PoolEntry, correct: bool) -> None:
        """An answer of an earlier session of the run."""
        self.unused.get(entry.level, set()).discard(entry.row)
        self.psi.record(entry.level, correct)


def slot_ids(features: Iterable[str], trials: int) -> Iterator[tuple[str, str]]:
    """(slot id, feature), the features interleaved so that every track has requests in
    flight from the start."""
    names = list(features)
    for i in range(trials):
        for feature in names:
            yield f"detection-adaptive-{feature}-{i:04d}", feature


def learned_entry(record: Record) -> tuple[PoolEntry, bool] | None:
    """The stimulus and outcome of an earlier adaptive trial, None for any other record."""
    meta = record.metadata
    if meta.get("placement") != "adaptive" or not record.ok:
        return None
    try:
        entry = PoolEntry(int(meta["row"]), str(meta["feature"]), float(meta["level"]))
    except (KeyError, TypeError, ValueError):
        return None
    return entry, record.scores.get("answer", {}).get("correct") == 1.0


class AdaptiveDetection:
    """The detection experiment run adaptively: its slots, its tracks (one per feature, over
    the stored stimuli) and the solver that fills a slot with a stimulus and asks it."""

    def __init__(self, rows: ParquetRows, make: Callable[[DataRow], Sample],
                 score: Scorer, trials: int, form: Sigmoid):
        self.rows, self.make, self.score, self.trials = rows, make, score, trials
        pool: dict[str, list[PoolEntry]] = {}
        for row in parquet.iter_rows(rows.files[POOL_FOLDER], ("feature", "level")):
            feature, level = row.values.get("feature"), row.values.get("level")
            if isinstance(feature, str) and isinstance(level, int | float) and \
                    math.isfinite(level) and level > 0:
                pool.setdefault(feature, []).append(PoolEntry(row.index, feature,
                                                              float(level)))
        where = rows.root / POOL_FOLDER
        if not pool:
            raise parquet.DataError(f"{where}: no detection stimulus with a feature and a "
                                    "positive level")
        short = {f: len(e) for f, e in pool.items() if len(e) < trials}
        if short:
            raise parquet.DataError(
                f"{where}: {', '.join(f'{f} has {n}' for f, n in short.items())} "
                f"stimuli, fewer than --adaptive-trials {trials} (write more with `visioneval "
                "data synth-psychophysics --n N`)")
        self.tracks = {f: FeatureTrack.over(f, entries, form) for f, entries in pool.items()}

    def count(self) -> int:
        return self.trials * len(self.tracks)

    def slots(self) -> Iterator[Sample]:
        """The detection slots, each showing its feature's first stimulus as a stand-in (the
        image a dry run prices; the stimulus asked is chosen when the slot runs)."""
        stand_ins: dict[str, Sample] = {}
        for ident, feature in slot_ids(self.tracks, self.trials):
            if feature not in stand_ins:
                first = min(min(rows) for rows in self.tracks[feature].unused.values() if rows)
                stand_ins[feature] = self._read(first)
            shown = stand_ins[feature]
            yield Sample(id=ident, group="detection", target=feature,
                         messages=shown.messages,
                         metadata={"experiment": "detection", "feature": feature,
                                   "placement": "adaptive"})

    def _read(self, row: int) -> Sample:
        for item in self.rows.group_samples(POOL_FOLDER, self.make, wanted={row}):
            if isinstance(item, Sample):
                return item
            raise Skip(item.reason)
        raise Skip(f"row #{row} is not in the data")

    def learn(self, record: Record) -> None:
        found = learned_entry(record)
        if found is not None and found[0].feature in self.tracks:
            track = self.tracks[found[0].feature]
            if found[0].row in track.unused.get(found[0].level, set()):
                track.learn(*found)

    async def solve(self, slot: Sample, ask: Ask) -> Solved:
        """Fill the slot: take a stimulus from its feature's track, ask it, tell the track."""
        track = self.tracks[str(slot.metadata["feature"])]
        while True:
            try:
                entry = track.take()
            except ValueError as exc:
                return Solved(Response(error=str(exc)))
            try:
                stimulus = await asyncio.to_thread(self._read, entry.row)
                break
            except Skip as exc:  # a stimulus that cannot be sent is dropped, not retried
                log.warning("%s row #%d: %s", self.rows.root / POOL_FOLDER, entry.row, exc)
                track.drop(entry)
        stimulus.metadata = {**stimulus.metadata, "placement": "adaptive", "slot": slot.id}
        try:
            response = await ask(Request(stimulus.messages, ask.settings))
        except BaseException:
            track.give_back(entry)
            raise
        if not response.ok:
            track.give_back(entry)
            return Solved(response, asked=stimulus)
        parsed, scores = self.score(stimulus, response.text or "")
        track.answered(entry, scores.get("answer", {}).get("correct") == 1.0)
        return Solved(response, parsed, scores, asked=stimulus)
