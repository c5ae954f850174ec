"""CV-Bench end to end: the loader on a folder in the Hub's layout, bad rows named, the real
command against the loopback server over real HTTP (one request per protocol, the paper's
combined score beside lmms-eval's mean over items, why the protocols differ), the offline
random baseline with the blind control against chance, and lmms-eval's logs rescored."""

from __future__ import annotations

import csv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke, load
from lmms_logs import line, write

from visioneval.benchmarks.cvbench.benchmark import build
from visioneval.benchmarks.cvbench.protocols import prompt
from visioneval.benchmarks.cvbench.synth import schema, write_synthetic
from visioneval.core.records import SkippedRow

ITEMS = 24


@pytest.fixture(scope="module")
def cv_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("cvbench")
    write_synthetic(root, ITEMS, seed=2)
    return root


def gold(root) -> list[dict]:
    return pq.read_table(root / "test.parquet",
                         columns=["idx", "source", "answer"]).to_pylist()


def test_the_loader_reads_a_hub_shaped_folder(cv_data):
    bench = build({"data_dir": cv_data})
    samples = list(bench.samples())
    assert len(samples) == ITEMS * 3 and bench.total() == ITEMS * 3
    first = samples[0]
    assert first.id == "0/paper" and first.metadata["source"] == "ADE20K"
    assert first.messages[0].parts[1].endswith("given choices directly.")
    row = pq.read_table(cv_data / "test.parquet").to_pylist()[0]
    assert first.messages[0].parts[0].data == row["image"]["bytes"]  # the stored bytes
    # two items share each image: the cluster the intervals resample
    assert samples[0].metadata["image_key"] == samples[3].metadata["image_key"]
    assert first.target == {"original": row["answer"][1], "corrected": row["answer"][1]}


def test_a_bad_row_is_one_line_naming_the_row_and_field(cv_data, tmp_path):
    rows = pq.read_table(cv_data / "test.parquet").to_pylist()[:4]
    rows[1]["answer"] = "(F)"
    rows[2]["source"] = "KITTI"
    rows[3]["image"] = {"bytes": b"not an image", "path": "x.png"}
    pq.write_table(pa.Table.from_pylist(rows, schema=schema()), tmp_path / "test.parquet")
    made = list(build({"data_dir": tmp_path}).samples())
    skipped = [m.line() for m in made if isinstance(m, SkippedRow)]
    assert len(skipped) == 3
    assert "(idx 1)" in skipped[0] and "'(F)' names no option" in skipped[0]
    assert "field 'source' is 'KITTI'" in skipped[1]
    assert "image" in skipped[2]


def test_three_prompts_and_why_the_protocols_differ(serve, cv_data, tmp_path):
    server = serve(answer=lambda p: "The answer is (A).")
    out = tmp_path / "run"
    result = invoke("cvbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", cv_data, "--out", out, "--no-progress",
                    "--labels", "original")
    assert result.exit_code == 0, result.output
    assert server.stats.requests == ITEMS * 3
    metrics = load(out)
    per = metrics["results"]["original"]
    rows = gold(cv_data)
    right = {s: [r["answer"] == "(A)" for r in rows if r["source"] == s]
             for s in ("ADE20K", "COCO", "Omni3D")}
    acc = {s: sum(v) / len(v) for s, v in right.items()}
    combined = ((acc["ADE20K"] + acc["COCO"]) / 2 + acc["Omni3D"]) / 2
    # the paper splits on "answer is" and VLMEvalKit finds the lone A: both right on (A)
    for protocol in ("paper", "vlmevalkit"):
        assert per[protocol]["cv_bench"] == pytest.approx(combined)
        assert per[protocol]["per_source"]["COCO"]["accuracy"] == pytest.approx(acc["COCO"])
        assert per[protocol]["accuracy_ci95_clusters"] == "image"
        assert per[protocol]["accuracy_ci95_n_clusters"] == ITEMS // 2
        # 4 Omni3D images of 12: some resamples draw none, so no interval, and why
        assert "no item of a source" in per[protocol]["cv_bench_ci95_unavailable"]
    # lmms-eval reads the T of "The": never right, every answer unread
    assert per["lmms-eval"]["accuracy"] == 0.0 and per["lmms-eval"]["unparsed"] == ITEMS
    lmms = metrics["differences"]["protocols"][0]
    lost = sum(sum(v) for v in right.values())
    assert lmms["protocol"] == "lmms-eval"
    assert [(c["cause"], c["lost"]) for c in lmms["causes"]] == [("extraction", lost)]
    notes = {(n["protocol"], n["cause"]): n for n in metrics["differences"]["notes"]}
    assert "utils.py:67-79" in notes[("lmms-eval", "aggregation")]["what"]
    assert "no combined score" in notes[("vlmevalkit", "aggregation")]["what"]
    assert all(len(x) <= 100 for x in result.output.splitlines())
    moved = list(csv.DictReader((out / "protocols.csv").open()))
    assert len(moved) == lost and {m["cause"] for m in moved} == {"extraction"}


@pytest.mark.slow
def test_random_baseline_and_the_blind_control(cv_data, tmp_path):
    out = tmp_path / "run"
    result = invoke("cvbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    cv_data, "--out", out, "--no-progress", "--variant", "blind",
                    "--protocol", "paper")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    block = metrics["results"]["original"]["paper"]
    assert block["n"] == ITEMS and block["unparsed"] == 0
    # Count items have 4 or 6 options, the others 2
    assert 0.25 < block["chance"] < 0.5
    shown = invoke("show", out)
    assert shown.exit_code == 0, shown.output
    assert "blind" in shown.output and "1/(number of options)" in shown.output


def test_lmms_eval_logs_rescored(tmp_path):
    text = "How many chairs? Select from the following choices.\n(A) 3\n(B) 2\n(C) 1"
    # each answer and the letter lmms-eval logs for it (utils.py:20-24: the first letter)
    answers = [("B", "B"), ("(C) one", "C"), ("The answer is B", "T"), ("", "")]
    lines = []
    for i, (response, parsed) in enumerate(answers):
        source = ("ADE20K", "COCO", "Omni3D", "COCO")[i]
        field = {"id": 100 + i, "gt_content": "B", "pred_parsed": parsed, "pred": response,
                 "type": "2D", "task": "Count", "source": source,
                 "is_correct": parsed == "B"}
        lines.append(line("0.4", i, "(B)", response,
                          prompt("lmms-eval", text, ["3", "2", "1"]), {"cv_bench_acc": field}))
    logs = write(tmp_path / "logs" / "m" / "20250101_samples_cv_bench.jsonl", lines)
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    block = metrics["results"]["original"]["lmms-eval"]
    # "B" right, "(C) one" wrong, "The answer is B" reads T: wrong; "" is a failed request
    assert (block["n"], block["n_errors"], block["accuracy"]) == (3, 1, pytest.approx(1 / 3))
    checks = load(out, "run.json")["rescored_from"]["checks"]
    assert checks["lmms_eval_extraction"] == {"compared": 4, "differ": 0}
