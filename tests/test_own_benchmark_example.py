"""The own-benchmark example of docs/adding-a-benchmark.md (examples/own_benchmark/standout.py:
one question, one scorer, its table by default) runs with every engine feature against a
model server: a whole run, two shards and their merge, a resume, compare and report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke, journal, load

from visioneval.loopback.server import answer_fixed

EXAMPLE = Path(__file__).parents[1] / "examples" / "own_benchmark" / "standout.py"
DEFINITION = f"{EXAMPLE}:StandOutDefinition"


def _run(server, data: Path, out: Path, *extra: str):
    return invoke("run", DEFINITION, "--backend", "openai", "--base-url",
                  server.base_url + "/v1", "--model", "m", "-o", f"data={data}",
                  "--out", out, "--no-progress", "--no-cache", *extra)


@pytest.mark.slow
def test_own_benchmark_runs_sharded_merged_resumed_compared_and_reported(serve, synth_data,
                                                                         tmp_path):
    data = synth_data / "P3"
    answers = pq.read_table(data, columns=["answer"]).column("answer").to_pylist()
    server = serve()  # answers one of the prompt's options, by a checksum of the prompt

    whole = tmp_path / "whole"
    result = _run(server, data, whole)
    assert result.exit_code == 0, result.output
    info, metrics = load(whole, "run.json"), load(whole)
    assert info["benchmark"] == "standout" and info["definition"] == DEFINITION
    assert info["options"] == {"data": str(data.resolve()), "num_samples": None}
    assert info["dataset"]["rows"] == {"P3": len(answers)} and server.stats.answered == 8
    # The default table: accuracy overall and per difficulty, each read from the records.
    records = journal(whole)
    right = [r["parsed"]["answer"] == r["target"] for r in records]
    assert metrics["overall"]["n"] == len(answers) == 8
    assert metrics["overall"]["accuracy"] == pytest.approx(sum(right) / len(right))
    assert set(metrics["groups"]) == {r["id"].split("_")[4] for r in records}
    assert (whole / "results.csv").read_text().startswith("group,n,errors,accuracy")
    assert "Results (percent)" in (whole / "report.html").read_text()

    # Two shards, merged: the same records and metrics as the whole run.
    parts = [tmp_path / "s1", tmp_path / "s2"]
    for k, part in enumerate(parts, 1):
        assert _run(server, data, part, "--shard", f"{k}/2").exit_code == 0
    merged = tmp_path / "merged"
    result = invoke("merge", *parts, "--out", merged, "--definition", DEFINITION,
                    "--no-report")
    assert result.exit_code == 0, result.output
    assert load(merged) == metrics
    assert sorted(r["id"] for r in journal(merged)) == sorted(r["id"] for r in records)

    # Interrupted after three answers, resumed: only the rest is asked.
    resumed = tmp_path / "resumed"
    shutil.copytree(whole, resumed)
    lines = (resumed / "samples.jsonl").read_text().splitlines()
    (resumed / "samples.jsonl").write_text("\n".join(lines[:3]) + "\n")
    before = server.stats.answered
    result = invoke("run", DEFINITION, "--resume", resumed, "--base-url",
                    server.base_url + "/v1", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "3 done before" in result.output and server.stats.answered - before == 5
    assert load(resumed) == metrics

    # Another model, always naming size: right exactly where the answer is size.
    fixed = serve(answer=answer_fixed("The size."))
    other = tmp_path / "size"
    assert _run(fixed, data, other).exit_code == 0
    assert load(other)["overall"]["accuracy"] == pytest.approx(
        answers.count("size") / len(answers))
    result = invoke("compare", whole, other, "--definition", DEFINITION, "--out",
                    tmp_path / "table")
    assert result.exit_code == 0, result.output
    header = next(ln for ln in result.stdout.splitlines() if ln.startswith("Model"))
    assert "Accuracy" in header and "easy accuracy" in header
    assert {whole.name, other.name} <= set(result.stdout.split())

    result = invoke("report", merged, "--definition", DEFINITION)
    assert result.exit_code == 0, result.output
    page = (merged / "report.html").read_text()
    assert "Results (percent)" in page and "accuracy 95% interval" in page
    assert json.loads((merged / "run.json").read_text())["benchmark"] == "standout"
