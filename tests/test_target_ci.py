"""`--target-ci W`: samples in a seeded random order, the betting confidence sequence that
stops the run, run.json's record of the rule, and a resume that extends a stopped run.
(Coverage over 1000 simulated runs: measure/sequential_coverage.py, docs/stopping.md.)"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke, journal, salbench_args

from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.core.benchmark import Benchmark
from visioneval.core.capabilities import LearnsFromAnswers
from visioneval.core.records import Record, Response, Sample
from visioneval.engine.order import seeded_order
from visioneval.engine.stopping import SequentialStop, StoppingRule, refusal
from visioneval.stats.sequential import BettingConfidenceSequence


def _record(sample_id: str, correct: float | None) -> Record:
    response = Response(text="x") if correct is not None else Response(error="HTTP 500")
    return Record.model_construct(id=sample_id, group="g", target="t", response=response,
                                  metadata={}, prompt=[], parsed={},
                                  scores={} if correct is None else
                                  {"p": {"correct": correct}})


def _rule(width: float = 10, min_samples: int = 5) -> SequentialStop:
    return SequentialStop(StoppingRule(width, min_samples), Benchmark.headline_outcome.__get__(
        _Plain(None)))


class _Plain(Benchmark):
    name = "plain"


class _Adaptive(Benchmark):
    name = "adaptive"

    def learn(self, record: Record) -> None:
        pass


def test_the_sequence_narrows_around_the_mean_and_never_widens():
    cs = BettingConfidenceSequence(width=0.1)
    rng = np.random.default_rng(0)
    widths = []
    for x in rng.random(600) < 0.8:
        cs.add(float(x))
        widths.append(cs.interval().width)
    final = cs.interval()
    assert final.mean is not None and final.low <= final.mean <= final.high
    assert all(b <= a for a, b in zip(widths, widths[1:], strict=False))
    assert widths[-1] < 0.15 < widths[20]


def test_an_observation_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match=r"in \[0, 1\], not 1.5"):
        BettingConfidenceSequence().add(1.5)


@pytest.mark.slow
def test_monitored_after_every_sample_the_sequence_rarely_ever_misses():
    """Time-uniform: over 200 seeded runs of 300 samples each, looked at after every
    sample, at most 5% ever exclude the true mean (a fixed-n 95% interval looked at this
    often misses far more)."""
    ever_missed = 0
    for seed in range(200):
        cs = BettingConfidenceSequence(width=0.1)
        for x in np.random.default_rng(seed).random(300) < 0.3:
            cs.add(float(x))
            interval = cs.interval()
            if not interval.low <= 0.3 <= interval.high:
                ever_missed += 1
                break
    assert ever_missed <= 10


def _samples(n: int) -> list[Sample]:
    return [Sample(f"s{i}", "g", (), "t") for i in range(n)]


def test_the_order_is_a_permutation_that_no_window_size_changes():
    items = _samples(500)
    small = [s.id for s in seeded_order(lambda: iter(items), 3, window=16)]
    whole = [s.id for s in seeded_order(lambda: iter(items), 3, window=1000)]
    assert small == whole and sorted(small) == sorted(s.id for s in items)
    assert small != [s.id for s in seeded_order(lambda: iter(items), 4)]
    assert small[:20] != [s.id for s in items[:20]]


def test_each_sample_is_first_about_equally_often_over_seeds():
    items = _samples(4)
    firsts = Counter(next(seeded_order(lambda: iter(items), seed)).id for seed in range(800))
    assert set(firsts) == {"s0", "s1", "s2", "s3"}
    assert all(150 <= n <= 250 for n in firsts.values()), firsts


def test_a_run_that_stops_early_reads_the_data_once():
    items, passes = _samples(1000), []

    def read():
        passes.append(1)
        return iter(items)

    order = seeded_order(read, 0, window=64)
    taken = [next(order) for _ in range(50)]
    assert len(taken) == 50 and len(passes) == 1


def test_outcomes_are_taken_in_the_order_not_as_they_arrive():
    rule = _rule()
    rule.observe(1, _record("b", 1.0))
    assert rule.sequence.n == 0  # position 0 is still in flight
    rule.observe(0, _record("a", 0.0))
    assert rule.sequence.n == 2
    rule.observe(2, _record("c", None))  # a failed request has no outcome
    rule.observe(3, _record("d", 1.0))
    assert rule.sequence.n == 3


def test_the_rule_stops_once_narrow_enough_and_not_before_min_samples():
    rule = _rule(width=60, min_samples=30)
    for i in range(29):
        rule.observe(i, _record(str(i), 1.0))
    assert not rule.satisfied
    rule.observe(29, _record("29", 1.0))
    assert rule.satisfied and rule.stopped_at == 30
    info = rule.info(100)
    assert info.stopped and info.ci[1] - info.ci[0] <= 0.6 and info.samples == 100


def test_benchmarks_without_a_proportion_or_that_learn_are_refused():
    assert refusal(_Plain(None)) is None
    assert isinstance(_Adaptive(None), LearnsFromAnswers)
    assert "chooses its next requests" in (refusal(_Adaptive(None)) or "")

    class OwnSummary(_Plain):
        def summarize(self, records):
            return {}

    assert "not a proportion" in (refusal(OwnSummary(None)) or "")


@pytest.mark.parametrize("extra, said", [
    (("--shard", "1/2"), "without --shard"),
    (("--executor", "ray"), "--executor local"),
    (("--variant", "blind"), "--variant controls"),
])
def test_what_cannot_keep_a_random_order_is_refused_in_one_line(serve, synth_data, tmp_path,
                                                                 extra, said):
    server = serve()
    result = invoke(*salbench_args(server, synth_data, tmp_path / "r", "--splits",
                                   "synthetic", "--target-ci", "10", *extra))
    assert result.exit_code == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_a_benchmark_whose_headline_is_not_a_proportion_is_refused(serve, illusion_data,
                                                                     tmp_path):
    server = serve()
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--out", tmp_path / "r", "--no-progress", "--target-ci", "10")
    assert result.exit_code == 2
    assert "illusionbench's main number is not a proportion" in result.stderr
    assert not (tmp_path / "r").exists()


@pytest.fixture(scope="module")
def many_rows(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("salbench-many")
    write_synthetic(root, 100, seed=3)  # 300 samples over three configs
    return root


def _stopping(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())["stopping"]


@pytest.mark.slow
def test_a_run_stops_early_records_its_rule_and_a_resume_extends_it(serve, many_rows,
                                                                   tmp_path):
    server = serve()
    run = tmp_path / "run"
    args = ("--splits", "synthetic", "--no-cache", "--concurrency", "4")
    first = invoke(*salbench_args(server, many_rows, run, *args, "--target-ci", "30",
                                  "--min-samples", "30"))
    assert first.exit_code == 0, first.stderr
    rule = _stopping(run)
    assert rule["stopped"] and rule["target_ci"] == 30 and rule["min_samples"] == 30
    assert 30 <= rule["stopped_at"] <= rule["n"] < rule["samples"] == 300
    assert rule["ci"][1] - rule["ci"][0] <= 0.30 and rule["proportion"] == "strict exact match"
    records = journal(run)
    assert len(records) == rule["n"] < 300  # the samples in flight at the stop finished too
    assert [r["id"] for r in records] != sorted(r["id"] for r in records)
    assert "stopping rule: 95% betting confidence sequence" in first.stdout
    assert "valid under the stopping rule" in (run / "report.html").read_text()

    resume = ("salbench", "--resume", run, "--no-progress", "--base-url",
              server.base_url + "/v1")
    again = invoke(*resume)
    assert again.exit_code == 0, again.stderr
    assert len(journal(run)) == len(records)  # the same W: nothing more is sent

    narrower = invoke(*resume, "--target-ci", "20")
    assert narrower.exit_code == 0, narrower.stderr
    extended = _stopping(run)
    assert extended["n"] > rule["n"] and extended["target_ci"] == 20
    assert extended["segments"] == [[0, 30.0], [rule["n"], 20.0]]
    assert extended["ci"][1] - extended["ci"][0] <= 0.20 or not extended["stopped"]
    ids = [r["id"] for r in journal(run)]
    assert ids[:len(records)] == [r["id"] for r in records] and len(set(ids)) == len(ids)


def test_a_run_started_without_the_rule_cannot_take_it_on_resume(serve, synth_data,
                                                                 tmp_path):
    server = serve()
    run = tmp_path / "run"
    assert invoke(*salbench_args(server, synth_data, run, "--splits", "synthetic",
                                 "--no-cache", "--num-samples", "2")).exit_code == 0
    result = invoke("salbench", "--resume", run, "--no-progress", "--base-url",
                    server.base_url + "/v1", "--target-ci", "10")
    assert result.exit_code == 2
    assert "was started without --target-ci" in result.stderr


def test_vqa_stops_on_its_scorer_accuracy(tmp_path):
    example = Path(__file__).parent.parent / "examples" / "vqa" / "questions.jsonl"
    run = tmp_path / "run"
    result = invoke("vqa", "--data", example, "--scorer", "choice", "--backend", "builtin",
                    "--model", "random", "--out", run, "--no-progress", "--no-report",
                    "--concurrency", "1", "--target-ci", "100", "--min-samples", "3")
    assert result.exit_code == 0, result.output
    rule = _stopping(run)
    assert rule["proportion"] == "accuracy" and rule["stopped_at"] == 3
    assert rule["n"] == len(journal(run)) < rule["samples"] == 12
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["overall"]["n"] == rule["n"]
    assert rule["estimate"] == pytest.approx(metrics["overall"]["accuracy"])


@pytest.mark.slow
def test_a_stopped_run_sends_its_failed_requests_again_on_resume(serve, many_rows, tmp_path):
    # The first requests fail (500, one attempt each): errors are records, not answers.
    server = serve(fail_first=6, faults=("500",))
    run = tmp_path / "run"
    args = ("--splits", "synthetic", "--no-cache", "--concurrency", "2", "--max-attempts",
            "1", "--no-report")
    first = invoke(*salbench_args(server, many_rows, run, *args, "--target-ci", "45",
                                  "--min-samples", "20"))
    assert first.exit_code == 1, first.stderr  # samples ended in error
    assert _stopping(run)["stopped"]
    failed = [r["id"] for r in journal(run) if r["response"].get("error")]
    assert len(failed) == 6
    sent = server.stats.requests
    again = invoke("salbench", "--resume", run, "--no-progress", "--no-report",
                   "--base-url", server.base_url + "/v1")
    assert again.exit_code == 0, again.stderr
    assert server.stats.requests - sent == 6  # those, and nothing past the stop
    latest = {r["id"]: r for r in journal(run)}
    assert not any(latest[i]["response"].get("error") for i in failed)
    rule = _stopping(run)
    assert rule["stopped"] and rule["n"] == len(latest)


def test_a_narrower_width_on_resume_tunes_only_the_bets_still_to_come():
    """A session killed before it wrote its progress leaves run.json's n behind; the new
    width starts where this session's own outcomes start, never over outcomes seen."""
    from visioneval.core.runfiles import StoppingInfo

    stale = StoppingInfo(method="betting", target_ci=30, level=0.95, min_samples=100,
                         seed=0, stopped=False, n=0, ci=[0.0, 1.0], segments=[[0, 30.0]])
    outcome = Benchmark.headline_outcome.__get__(_Plain(None))
    rule = SequentialStop.resumed(stale, outcome, width=20)
    for i in range(10):
        rule.remember(_record(str(i), 1.0))
    for i in range(10):
        rule.resumed_sample(i, str(i))
    assert rule.segments == [(0, 30.0)] and rule.sequence.n == 10
    rule.observe(10, _record("10", 0.0))
    assert rule.segments == [(0, 30.0), (10, 20.0)]
    assert [list(s) for s in rule.info().segments] == [[0, 30.0], [10, 20.0]]
