"""`visioneval compare`'s paired tests on two real loopback runs over the same samples:
McNemar's exact test from the journals' discordant pairs, a paired bootstrap for macro F1;
runs over different samples are compared without pairing, and say so."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from cli_helpers import invoke, journal, load, salbench_args
from scipy.stats import binomtest

from visioneval.stats.paired import mcnemar


def test_mcnemar_on_a_known_table():
    a = np.array([1] * 10 + [0] * 5 + [1] * 3 + [0] * 2)
    b = np.array([1] * 10 + [1] * 5 + [0] * 3 + [0] * 2)
    result = mcnemar(a, b, "x")
    assert result.p_value == pytest.approx(binomtest(3, 8, 0.5).pvalue)
    assert result.p_value == pytest.approx(0.7265625)  # 2 * P(X <= 3), X ~ Bin(8, 1/2)
    assert not result.significant and "only in this run 5" in result.detail


def _runs(serve, synth_data, tmp_path, *extra_b):
    a_server = serve()  # answers by a hash of the prompt
    b_server = serve(answer=lambda prompt: "color")
    a, b = tmp_path / "a", tmp_path / "b"
    for server, out, extra in ((a_server, a, ()), (b_server, b, extra_b)):
        assert invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                     "--no-report", "--no-cache", *extra)).exit_code == 0
    return a, b


def test_two_runs_on_the_same_samples_get_paired_tests(serve, synth_data, tmp_path):
    a, b = _runs(serve, synth_data, tmp_path)
    result = invoke("compare", a, b, "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    assert "Paired tests" in result.stdout
    text = (tmp_path / "cmp" / "paired.csv").read_text()
    rows = {r["metric"]: r for r in csv.DictReader(text.splitlines())}
    em_a = {r["id"]: r["scores"]["strict"]["exact_match"] for r in journal(a)}
    em_b = {r["id"]: r["scores"]["strict"]["exact_match"] for r in journal(b)}
    only_a = sum(em_a[i] == 1 and em_b[i] == 0 for i in em_a)
    only_b = sum(em_a[i] == 0 and em_b[i] == 1 for i in em_a)
    em = rows["P3 exact match"]
    assert em["test"] == "McNemar exact"
    expected = binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue \
        if only_a + only_b else 1.0
    assert float(em["p"]) == pytest.approx(expected)
    assert (em["significant at 5%"] == "True") == (expected < 0.05)
    f1 = rows["P3 macro F1"]
    difference = load(b)["P3"]["strict"]["macro_f1"] - load(a)["P3"]["strict"]["macro_f1"]
    assert float(f1["difference"]) == pytest.approx(difference)
    low, high = float(f1["difference 95% low"]), float(f1["difference 95% high"])
    assert low <= difference <= high
    assert f"{100 * low:+.1f} to {100 * high:+.1f} points" in f1["detail"]
    assert (f1["significant at 5%"] == "True") == (not low <= 0 <= high)
    # The comparison page and comparison.md carry the same tests, each with its detail.
    page = (tmp_path / "cmp" / "comparison.html").read_text()
    markdown = (tmp_path / "cmp" / "comparison.md").read_text()
    for text in (page, markdown):
        assert "Paired tests against a" in text and em["detail"] in text
        assert f"{float(em['p']):.3g}" in text
    assert "Paired tests" not in result.stdout.split("Paired tests: ")[0]  # once in the terminal


def test_runs_over_different_samples_are_not_paired(serve, synth_data, tmp_path):
    a, b = _runs(serve, synth_data, tmp_path, "--num-samples", "5")
    result = invoke("compare", a, b)
    assert result.exit_code == 0, result.output
    assert "compared without pairing" in result.stdout and "P3 exact match" in result.stdout
    assert "Paired tests" not in result.stdout
