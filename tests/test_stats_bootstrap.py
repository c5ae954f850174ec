"""Bootstrap standard errors and 95% intervals: known cases, the macro-F1 statistic equal to
the metric, seeded and order-free, and written into a real run's metrics.json."""

from __future__ import annotations

import random

import numpy as np
import pytest
from cli_helpers import invoke, load, salbench_args

from visioneval.metrics.labelsets import ParserTally, _statistic, sample_scores
from visioneval.stats.bootstrap import Outcomes, mean_statistic, replicates, summaries

P3 = ("orientation", "color", "size")


def _tally(samples, classes=P3):
    tally = ParserTally()
    for sample_id, pred, gold in samples:
        tally.add(pred, gold, sample_scores(pred, gold), classes, sample_id)
    return tally


def _samples(n, seed=0):
    rng = random.Random(seed)
    return [(f"P3/img{i}", {rng.choice(P3)}, {rng.choice(P3)}) for i in range(n)]


def test_a_constant_has_a_point_interval_and_the_interval_holds_the_estimate():
    rows = np.ones((50, 1))
    found = summaries(rows, mean_statistic, ["exact_match"])["exact_match"]
    assert found == {"se": 0.0, "ci95": [1.0, 1.0]}
    rows = np.array([[1.0]] * 30 + [[0.0]] * 70)
    found = summaries(rows, mean_statistic, ["exact_match"])["exact_match"]
    low, high = found["ci95"]
    assert low < 0.3 < high and high - low < 0.25
    # The binomial standard error sqrt(p(1-p)/n) = 0.0458; the bootstrap's is close.
    assert found["se"] == pytest.approx(0.0458, abs=0.006)


def test_the_statistic_on_the_whole_sample_is_the_metric():
    tally = _tally(_samples(200))
    result = tally.result(P3, 0)
    rows = tally.outcomes.matrix()
    once = _statistic(len(P3))(rows.sum(axis=0, keepdims=True), len(rows))[0]
    assert once[0] == pytest.approx(result["exact_match"])
    assert once[1] == pytest.approx(result["macro_f1"])
    assert once[2] == pytest.approx(result["sample_f1"])
    for key in ("exact_match", "macro_f1", "sample_f1"):
        low, high = result[f"{key}_ci95"]
        assert low <= result[key] <= high and result[f"{key}_se"] > 0


def test_seeded_and_independent_of_the_order_of_samples():
    samples = _samples(120, seed=3)
    first = _tally(samples).result(P3, 0)
    shuffled = samples[:]
    random.Random(9).shuffle(shuffled)
    assert _tally(shuffled).result(P3, 0) == first


def test_too_few_samples_say_why():
    one = _tally(_samples(1)).result(P3, 0)
    assert "macro_f1_ci95" not in one and "1 scored sample" in one["macro_f1_ci95_unavailable"]


def test_resamples_are_vectorised_over_samples():
    outcomes = Outcomes(1)
    for i in range(5000):
        outcomes.add(f"id{i}", [i % 2])
    values = replicates(outcomes.matrix(), mean_statistic, resamples=120)
    assert values.shape == (120, 1) and abs(values.mean() - 0.5) < 0.01


def test_a_run_writes_intervals_beside_each_headline_metric(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    assert invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                 "--no-report")).exit_code == 0
    strict = load(out)["P3"]["strict"]
    for key in ("exact_match", "macro_f1", "sample_f1"):
        low, high = strict[f"{key}_ci95"]
        assert 0 <= low <= strict[key] <= high <= 1 and strict[f"{key}_se"] >= 0
    assert invoke("report", out).exit_code == 0
    low, high = strict["macro_f1_ci95"]
    assert f"{100 * low:.1f} to {100 * high:.1f}" in (out / "report.html").read_text()


def test_illusionbench_recall_has_an_interval(serve, illusion_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    assert invoke("illusionbench", "--backend", "openai", "--base-url",
                  server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                  "--out", out, "--no-progress", "--no-report").exit_code == 0
    for subset in load(out).values():
        for block in subset.values():
            for task in ("shape", "scene"):
                cell = block[task]
                low, high = cell["recall_ci95"]
                assert low <= cell["recall"] <= high and cell["recall_se"] >= 0
