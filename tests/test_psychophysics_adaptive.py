"""Adaptive placement (`--method adaptive`) inside a run: the Psi tracks take each trial's
stimulus from the pool as the run goes, never ask one stimulus twice (not even across a
resume, which learns the earlier answers first), spend trials near the threshold rather
than at the ends of the range, and the fit recovers the simulated observer's threshold."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke

from visioneval.benchmarks.psychophysics.placement import FeatureTrack, PoolEntry, slot_ids
from visioneval.commands.loopback import ObserverFlags, build_script
from visioneval.core.store import RunStore
from visioneval.stats.psychometric import criterion_level

ALPHA, BETA, LAPSE = 8.0, 3.0, 0.02
TRIALS = 60


def _observer(serve, fail_rate: float = 0.0):
    script = build_script(("m",), "observer", 0.0, fail_rate, "500", 0,
                          observer=ObserverFlags(
                              curves=f"orientation={ALPHA:g}:{BETA:g}:{LAPSE:g},"
                                     f"color={ALPHA:g}:{BETA:g}:{LAPSE:g}"))
    return serve(answer=script.answer, fail_rate=fail_rate, faults=("500",), seed=3)


def _adaptive(server, data: Path, out: Path, *extra: str):
    return invoke("psychophysics", "--backend", "openai", "--base-url",
                  server.base_url + "/v1", "--model", "m", "--data", data, "--out", out,
                  "--no-progress", "--no-cache", "--bootstrap", "200", "--method", "adaptive",
                  "--adaptive-trials", str(TRIALS), "--concurrency", "1", *extra)


def _answered(run: Path) -> list:
    return [r for r in RunStore.open(run).iter_latest() if r.ok]


def test_a_track_takes_each_stimulus_once_and_gives_back_a_failed_one():
    entries = [PoolEntry(row, "orientation", level) for row, level in
               enumerate([1.0, 1.0, 4.0, 4.0, 16.0, 16.0])]
    track = FeatureTrack.over("orientation", entries, "weibull")
    first = track.take()
    assert track.pending == 1 and track.left() == 5
    track.give_back(first)
    assert track.pending == 0 and track.left() == 6
    taken = []
    for _ in range(6):
        entry = track.take()
        taken.append(entry.row)
        track.answered(entry, correct=entry.level > 2)
    assert sorted(taken) == list(range(6)) and track.left() == 0
    with pytest.raises(ValueError, match="no orientation stimulus left"):
        track.take()


def test_a_learned_answer_uses_up_its_stimulus_and_moves_the_track():
    entries = [PoolEntry(row, "color", level) for row, level in
               enumerate([1.0, 2.0, 4.0, 8.0, 16.0, 32.0] * 3)]
    track = FeatureTrack.over("color", entries, "weibull")
    before = track.psi.posterior().copy()
    track.learn(PoolEntry(3, "color", 8.0), correct=True)
    assert track.left() == 17 and 3 not in track.unused[8.0]
    assert not np.allclose(before, track.psi.posterior())


def test_slots_interleave_the_features():
    assert [f for _, f in slot_ids(["orientation", "color"], 2)] == \
        ["orientation", "color", "orientation", "color"]


@pytest.mark.slow
def test_an_adaptive_run_spends_trials_near_threshold_and_recovers_it(serve, search_pool,
                                                                      tmp_path):
    server = _observer(serve)
    run = tmp_path / "run"
    result = _adaptive(server, search_pool, run)
    assert result.exit_code == 0, result.output
    records = _answered(run)
    assert len(records) == 2 * TRIALS
    assert {r.metadata["placement"] for r in records} == {"adaptive"}
    rows = Counter(r.metadata["row"] for r in records)
    assert max(rows.values()) == 1  # no stimulus asked twice
    true = criterion_level(0.75, ALPHA, BETA, 1 / 3, LAPSE, "weibull")
    assert true is not None
    levels = [r.metadata["level"] for r in records if r.metadata["feature"] == "orientation"]
    near = sum(true / 2.5 <= level <= true * 2.5 for level in levels)
    # constant stimuli would put 5 of the 12 levels (42%) in this band
    assert near / len(levels) > 0.6
    metrics = json.loads((run / "metrics.json").read_text())
    for fit in metrics["thresholds"]:
        low, high = fit["threshold_ci95"]
        assert fit["status"] == "reached" and low <= true <= high, fit
        assert fit["n_trials"] == TRIALS


@pytest.mark.slow
def test_a_resumed_adaptive_run_learns_its_answers_and_asks_no_stimulus_twice(
        serve, search_pool, tmp_path):
    flaky = _observer(serve, fail_rate=0.3)
    run = tmp_path / "run"
    first = _adaptive(flaky, search_pool, run, "--max-attempts", "1")
    assert first.exit_code == 1, first.output  # failed requests: errors, resumable
    answered_before = len(_answered(run))
    assert 0 < answered_before < 2 * TRIALS
    flaky.script.fail_rate = 0.0
    sent = flaky.stats.requests
    again = invoke("psychophysics", "--resume", run, "--no-progress", "--base-url",
                   flaky.base_url + "/v1")
    assert again.exit_code == 0, again.output
    records = _answered(run)
    assert len(records) == 2 * TRIALS
    assert flaky.stats.requests - sent == 2 * TRIALS - answered_before
    rows = Counter(r.metadata["row"] for r in records)
    assert max(rows.values()) == 1


@pytest.mark.slow
def test_too_few_pool_stimuli_is_one_line(serve, search_pool, tmp_path):
    server = _observer(serve)
    result = invoke("psychophysics", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data", search_pool, "--out",
                    tmp_path / "run", "--no-progress", "--method", "adaptive",
                    "--adaptive-trials", "200")
    assert result.exit_code == 2
    assert "orientation has 96, color has 96 stimuli, fewer than --adaptive-trials 200" \
        in result.stderr
    assert "detection-pool" in result.stderr
    assert server.stats.requests == 0


@pytest.mark.slow
def test_a_dry_run_prices_each_adaptive_slot_as_one_request(search_pool):
    result = invoke("psychophysics", "--data", search_pool, "--dry-run", "--backend", "openai",
                    "--model", "gpt-4o", "--price-in", "2.5", "--price-out", "10",
                    "--method", "adaptive", "--adaptive-trials", "50")
    assert result.exit_code == 0, result.output
    assert re.search(r"requests\s+100\b", result.output)  # 50 slots x 2 features
    assert "not counted" not in result.output
