"""Two runs' answers to the same samples set side by side as right or wrong, sample by sample:
what error consistency (`stats.error_consistency`) needs of a model's run and a person's.

Each run directory is only read: run.json, metrics.json and the journal, streamed one record
at a time (the last record of each sample, as every reader takes it), keeping 16 bytes of
sample-id digest and one byte of outcome a sample. Its benchmark's definition is found by
the trust rule of `core.registry` (a run names no code that is imported unless visioneval
registers it or the caller names it), and no model is asked.

A sample's outcome is the benchmark's 0/1 verdict for it: the row `metric` of the
definition's paired rows (`PairsRecords.paired_rows`, what `visioneval compare` tests),
or each record's first 0/1 row when `metric` is None; a benchmark without paired rows is
read by its score key (metrics.json's `score`, else "correct"), as its accuracy is. A
record that is an error (a failed request) is no answer, right or wrong, and one with no
such verdict (not scored, or a metric that is not 0/1) is unscored: both are left out of
the pairs and counted. Repeated answers (`--epochs`) and request variants (`--variant`)
are left out: the samples are the first answers to the original requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from visioneval.core import registry
from visioneval.core.capabilities import PairsRecords
from visioneval.core.idset import DIGEST_BYTES, digest
from visioneval.core.records import Record
from visioneval.core.rundir import OpenedRun, load_all
from visioneval.core.variant_ids import family_of
from visioneval.stats.bootstrap import RESAMPLES, SEED
from visioneval.stats.error_consistency import ErrorConsistency, error_consistency

WRONG, RIGHT, ERROR, UNSCORED = 0, 1, 2, 3
"""A sample's outcome in a run, one byte each."""

Verdict = tuple[str, bool] | None
"""(the metric it was read from, right) or None: no 0/1 verdict."""


@dataclass(frozen=True)
class RunOutcomes:
    """What one run contributed: its counts, and which metric names its verdicts came
    from."""

    directory: Path
    samples: int  # samples recorded (their latest records)
    errors: int  # failed requests: no answer
    unscored: int  # answered, with no 0/1 verdict for the metric
    only_here: int  # samples this run recorded and the other did not
    metrics: tuple[str, ...]  # the metric names the verdicts were read from


@dataclass(frozen=True)
class PairedCorrectness:
    """The samples both runs answered and scored, each as right (True) or wrong in each
    run: `a[i]` and `b[i]` are one sample's, in the order of the sample ids' digests (not
    the journals' order, so the pairs do not depend on how a run was resumed or merged)."""

    a: np.ndarray
    b: np.ndarray
    run_a: RunOutcomes
    run_b: RunOutcomes

    @property
    def n(self) -> int:
        return len(self.a)

    def consistency(self, resamples: int = RESAMPLES, seed: int = SEED) -> ErrorConsistency:
        """Error consistency of the two runs on these samples
        (`stats.error_consistency.error_consistency`)."""
        return error_consistency(self.a, self.b, resamples, seed)


def paired_correctness(run_a: Path | OpenedRun, run_b: Path | OpenedRun,
                       metric: str | None = None,
                       definition: registry.Named = None) -> PairedCorrectness:
    """Both runs' verdicts on the samples both answered and scored (see the module's
    docstring for what a verdict is). `definition`: the one the user named for the runs
    (`--definition`), else each run is read by the trust rule. A run directory that cannot
    be read is a `RunDirError` of one line."""
    view_a, view_b = load_all([run_a, run_b], definition)
    ids_a, found_a, names_a = _outcomes(view_a, metric)
    ids_b, found_b, names_b = _outcomes(view_b, metric)
    common, at_a, at_b = np.intersect1d(ids_a, ids_b, assume_unique=True,
                                        return_indices=True)
    scored = (found_a[at_a] <= RIGHT) & (found_b[at_b] <= RIGHT)
    return PairedCorrectness(
        a=found_a[at_a][scored] == RIGHT,
        b=found_b[at_b][scored] == RIGHT,
        run_a=_counts(view_a.directory, found_a, len(ids_a) - len(common), names_a),
        run_b=_counts(view_b.directory, found_b, len(ids_b) - len(common), names_b))


def _counts(directory: Path, found: np.ndarray, only_here: int,
            names: set[str]) -> RunOutcomes:
    return RunOutcomes(directory, len(found), int(np.sum(found == ERROR)),
                       int(np.sum(found == UNSCORED)), only_here, tuple(sorted(names)))


def _outcomes(view: OpenedRun, metric: str | None
              ) -> tuple[np.ndarray, np.ndarray, set[str]]:
    """(sorted sample-id digests, each one's outcome, the metric names read), streamed."""
    digests = bytearray()
    outcomes = bytearray()
    names: set[str] = set()
    read = _reader(view, metric)
    for record in _originals(view):
        digests += digest(record.id)
        if not record.ok:
            outcomes.append(ERROR)
            continue
        found = read(record)
        if found is None:
            outcomes.append(UNSCORED)
            continue
        name, right = found
        names.add(name)
        outcomes.append(RIGHT if right else WRONG)
    ids = np.frombuffer(bytes(digests), dtype=f"S{DIGEST_BYTES}")
    values = np.frombuffer(bytes(outcomes), dtype=np.uint8)
    order = np.argsort(ids, kind="stable")
    return ids[order], values[order], names


def _originals(view: OpenedRun) -> Iterator[Record]:
    """The run's first answers to its original requests (no variant), one per sample."""
    return (r for r in view.iter_records() if family_of(r) is None)


def _reader(view: OpenedRun, metric: str | None) -> Callable[[Record], Verdict]:
    """How a record of this run gives its verdict."""
    definition = view.shown
    if isinstance(definition, PairsRecords):
        pairs = definition

        def from_rows(record: Record) -> Verdict:
            rows = pairs.paired_rows(record)
            keys = [metric] if metric is not None else list(rows)
            for key in keys:
                row = rows.get(key)
                if row is not None and row.kind == "correct" and not row.pooled \
                        and len(row.values) == 1 and row.values[0] in (0.0, 1.0):
                    return key, row.values[0] == 1.0
            return None

        return from_rows
    key = metric or _score_key(view)

    def from_scores(record: Record) -> Verdict:
        value = next((block[key] for block in record.scores.values() if key in block), None)
        if value not in (0, 1) or isinstance(value, str):
            return None
        return key, value == 1

    return from_scores


def _score_key(view: OpenedRun) -> str:
    """The key a benchmark with the default metrics scores by (metrics.json's `score`)."""
    key = view.metrics.get("score")
    return key if isinstance(key, str) else "correct"
