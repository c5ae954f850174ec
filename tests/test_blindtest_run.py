"""BlindTest end to end: synth-blindtest writes the Hub's file and schema with labels that
follow from how each image was drawn; the offline random baseline and the loopback server
(real HTTP) run every task under the three protocols; lmms-eval's task_mean drop of tasks
with no right answer shows in the differences; a bad row is named and skipped."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_helpers import invoke, journal, load

from visioneval.benchmarks.blindtest.spec import PAPER_TASKS, TASKS, TOUCHING
from visioneval.benchmarks.blindtest.synth import make_row, write_synthetic
from visioneval.io.parquet import iter_rows, write_hf_parquet
from visioneval.loopback.server import answer_fixed

PER_TASK = 3


@pytest.fixture(scope="module")
def blind_data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("blindtest")
    write_synthetic(out, PER_TASK, seed=1)
    return out


def test_the_synthetic_set_is_the_hubs_schema_with_labels_from_the_drawing(blind_data):
    files = sorted(blind_data.rglob("valid-*.parquet"))
    assert [f.relative_to(blind_data).as_posix() for f in files] == \
        ["data/valid-00000-of-00001.parquet"]
    rows = [r.values for r in iter_rows(files, ("task", "image", "prompt", "groundtruth",
                                                "metadata"))]
    assert [r["task"] for r in rows] == [t for t in TASKS for _ in range(PER_TASK)]
    for row in rows:
        meta = json.loads(row["metadata"])
        label = row["groundtruth"]
        if row["task"] == TOUCHING:
            asks_overlap = "overlapping" in row["prompt"]
            drawn = meta["distance"] < 0 if asks_overlap else meta["distance"] <= 0
            assert label == ("Yes" if drawn else "No")
        elif row["task"].startswith("Counting Grid"):
            assert label == f"{meta['rows']},{meta['columns']}"
        elif row["task"] == "Line Plot Intersections":
            assert label == str(meta["intersections"]) and 2 <= meta["thickness"] <= 4
        elif row["task"] == "Circled Letter":
            assert label == meta["word"][meta["index"]]


@pytest.mark.slow
def test_offline_random_baseline_runs_every_task_under_three_protocols(blind_data, tmp_path):
    out = tmp_path / "run"
    result = invoke("blindtest", "--backend", "builtin", "--model", "random", "--data-dir",
                    blind_data, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 100 for line in result.stdout.splitlines())
    assert "BlindTest: random" in result.stdout and "Why the protocols differ" in \
        result.stdout
    records = journal(out)
    assert len(records) == 3 * PER_TASK * len(TASKS)
    metrics = load(out)
    paper = metrics["paper"]["original"]
    assert list(paper["tasks"]) == list(PAPER_TASKS)
    assert paper["tasks"]["Counting Grid"]["n"] == 2 * PER_TASK
    assert paper["task_mean"]["tasks"] == 8
    assert list(metrics["vlmevalkit"]["original"]) == ["subtasks", "parameters", "thresholds"]
    # The first three circles overlap (no gap level); the random answers never beat
    # guessing: "not reached" with its reason, never 0.
    for fitted in paper["thresholds"].values():
        assert fitted["status"] == "not reached" and fitted["reason"]
        assert "threshold" not in fitted
    assert "Thresholds at 0.75 correct" in result.stdout
    assert set(paper["parameters"][TOUCHING]) >= {"distance", "thickness", "gap_px"}
    by_gap = paper["parameters"][TOUCHING]["distance"]
    assert list(by_gap) == ["-0.15", "-0.1", "-0.05"]  # the first three gaps, in order
    assert all(c["accuracy_ci95"][0] <= c["accuracy"] <= c["accuracy_ci95"][1]
               for c in by_gap.values())
    assert "Two circles: accuracy by gap" in (out / "report.html").read_text()
    assert metrics["labels"]["relabelled"] == 0  # no known label error
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert {"all rows", "task mean", "Counting Grid", TOUCHING} <= {r["scope"] for r in rows}
    assert (out / "protocols.csv").exists()


def test_a_model_that_always_says_yes_over_real_http(serve, blind_data, tmp_path):
    server = serve(answer=answer_fixed("Yes"))
    out = tmp_path / "run"
    result = invoke("blindtest", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", blind_data,
                    "--out", out, "--no-progress", "--labels", "original")
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 3 * PER_TASK * len(TASKS)
    metrics = load(out)
    yes = [json.loads(r["metadata"]) | {"g": r["groundtruth"]} for r in
           (row.values for row in iter_rows(sorted(blind_data.rglob("*.parquet")),
                                            ("task", "groundtruth", "metadata")))
           if r["task"] == TOUCHING]
    share = sum(r["g"] == "Yes" for r in yes) / len(yes)
    for protocol in ("paper", "lmms-eval"):
        block = metrics[protocol]["original"]
        assert block["tasks"][TOUCHING]["accuracy"] == pytest.approx(share)
        assert block["tasks"]["Line Plot Intersections"]["accuracy"] == 0.0
    lmms = metrics["lmms-eval"]["original"]
    # lmms-eval's task_mean keeps touching circles alone (utils.py line 109).
    assert len(lmms["dropped"]) == 7
    assert lmms["lmms_task_mean"] == pytest.approx(share)
    assert lmms["task_mean"]["accuracy"] == pytest.approx(share / 8)
    notes = {n["cause"]: n for n in metrics["differences"]["notes"]
             if n["protocol"] == "lmms-eval"}
    assert notes["task_mean"]["points"] == pytest.approx(100 * (share - share / 8))


def test_a_bad_row_is_named_and_the_run_goes_on(tmp_path):
    import random

    rng = random.Random(0)
    rows = [make_row(TOUCHING, rng, k) for k in range(3)]
    rows[1]["groundtruth"] = ""
    rows[2]["metadata"] = "{not json"
    write_hf_parquet(tmp_path / "data" / "data" / "valid-00000-of-00001.parquet", rows,
                     ["image"])
    out = tmp_path / "run"
    result = invoke("blindtest", "--backend", "builtin", "--model", "random", "--data-dir",
                    tmp_path / "data", "--out", out, "--no-progress", "--protocol", "paper")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "column 'groundtruth' is empty" in text and "column 'metadata' is not JSON" in text
    assert len(journal(out)) == 1


def test_a_folder_without_the_valid_file_is_one_line(tmp_path):
    result = invoke("blindtest", "--backend", "builtin", "--model", "random", "--data-dir",
                    tmp_path, "--out", tmp_path / "run", "--no-progress")
    assert result.exit_code != 0
    assert "has no valid-*.parquet file" in " ".join(result.output.split())
    assert "Traceback" not in result.output
