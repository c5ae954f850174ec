"""Two real SalBench runs (synthetic P3 data, answered by loopback model servers over HTTP)
paired sample by sample for error consistency: the verdicts are each sample's strict exact
match as the journal recorded it, failed requests and samples in one run only are left out
and counted, and the runs are only read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import invoke, salbench_args

from visioneval.loopback.server import answer_popout
from visioneval.metrics.paired_correctness import paired_correctness
from visioneval.stats.error_consistency import error_consistency


def _run(server, data: Path, out: Path, *extra: str) -> Path:
    result = invoke(*salbench_args(server, data, out, "--configs", "P3", "--max-attempts",
                                   "1", *extra))
    assert result.exit_code in (0, 1), result.output  # 1: some requests failed
    return out


def _journal(run: Path) -> dict[str, dict]:
    """The last record of each sample, read from samples.jsonl here, on its own."""
    latest: dict[str, dict] = {}
    for line in (run / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        latest[record["id"]] = record
    return latest


def _verdict(record: dict) -> bool | None:
    """Right or wrong by the strict parser's exact match; None: a failed request."""
    if record["response"].get("error") is not None:
        return None
    return record["scores"]["strict"]["exact_match"] == 1.0


def _size(prompt) -> str:
    return "Size"


@pytest.mark.slow  # two runs of 24 samples over HTTP: about 1.4 s
def test_two_runs_paired_by_sample_with_errors_and_missing_samples_counted(
        serve, synth_data, tmp_path):
    popout = serve(answer=answer_popout)
    sizes = serve(answer=_size, fail_rate=0.3, faults=("500",), seed=7)
    a = _run(popout, synth_data, tmp_path / "a")
    b = _run(sizes, synth_data, tmp_path / "b", "--num-samples", "6")
    before = {p.name: p.read_bytes() for p in sorted(b.iterdir()) if p.is_file()}

    paired = paired_correctness(a, b)

    records_a, records_b = _journal(a), _journal(b)
    common = sorted(set(records_a) & set(records_b))
    pairs = [(_verdict(records_a[i]), _verdict(records_b[i])) for i in common]
    kept = [(x, y) for x, y in pairs if x is not None and y is not None]
    failed_b = sum(_verdict(r) is None for r in records_b.values())
    assert failed_b > 0 and len(set(records_a) - set(records_b)) > 0  # the test's premise
    assert paired.n == len(kept) > 0
    assert paired.run_b.errors == failed_b
    assert paired.run_a.errors == sum(_verdict(r) is None for r in records_a.values())
    assert paired.run_a.only_here == len(set(records_a) - set(records_b))
    assert paired.run_b.only_here == 0
    assert paired.run_a.samples == len(records_a) and paired.run_b.samples == len(records_b)
    assert paired.run_a.metrics == ("P3 exact match",)
    # The same pairs, whatever the order: the table of counts is the journals'.
    assert sorted(zip(paired.a.tolist(), paired.b.tolist(), strict=True)) == sorted(kept)
    found = paired.consistency()
    expected = error_consistency([x for x, _ in kept], [y for _, y in kept])
    assert found == expected
    # Reading wrote nothing into the run directory.
    assert {p.name: p.read_bytes() for p in sorted(b.iterdir()) if p.is_file()} == before


def test_a_run_against_itself_makes_the_same_errors(serve, synth_data, tmp_path):
    server = serve(answer=_size)
    a = _run(server, synth_data, tmp_path / "a")
    paired = paired_correctness(a, a)
    assert paired.run_a.only_here == paired.run_b.only_here == 0
    assert paired.a.tolist() == paired.b.tolist()
    assert 0 < paired.a.sum() < paired.n  # "Size" is right on some scenes only
    assert paired.consistency().kappa == pytest.approx(1.0)


def test_a_metric_no_record_has_leaves_every_sample_unscored(serve, synth_data, tmp_path):
    server = serve(answer=_size)
    a = _run(server, synth_data, tmp_path / "a", "--num-samples", "4")
    paired = paired_correctness(a, a, metric="no such metric")
    assert paired.n == 0
    assert paired.run_a.unscored == paired.run_a.samples > 0
    result = paired.consistency()
    assert result.kappa is None and result.reason == "no trial answered by both observers"
