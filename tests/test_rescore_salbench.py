"""`visioneval rescore --from lmms-eval` on SalBench logs written in lmms-eval's own format
(each version's layout, tests/lmms_logs.py): records like a real run's, metrics worked out
by hand, bad lines counted, no request sent, and the run opens in report and compare."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from cli_helpers import invoke, journal, load
from lmms_logs import SALBENCH_SUFFIX, line, results_file, salbench_metrics, write

P3 = ("orientation", "color", "size")
O3 = ("orientation", "color", "focus", "shape", "size", "location", "pattern")
QUESTION = ("Context: Given this list of low level visual features defined according to "
            "feature integration theory: Orientation, Color, Size. Task: Examine this image "
            "and identify the feature that makes one object notably different from the others.")
FAILED = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."


def p3_log(folder: Path, version: str = "0.7") -> Path:
    """Five P3 samples (right, wrong, right only under the lenient parser, an empty answer,
    a failed request) and three lines that hold no sample."""
    rows = [("img_000", "color", "Color"), ("img_001", "size", "orientation"),
            ("img_002", "orientation", "Orientation."), ("img_003", "color", ""),
            ("img_004", "size", FAILED)]
    lines: list = [line(version, i, answer, text, QUESTION + SALBENCH_SUFFIX,
                        salbench_metrics(image, text, answer, P3),
                        doc={"question": QUESTION, "answer": answer, "image_id": image})
                   for i, (image, answer, text) in enumerate(rows)]
    lines.insert(3, '{"doc_id": 9, "target": "col')  # torn
    lines.insert(4, "[1, 2]")
    lines.append({"target": "color", "filtered_resps": "color", "input": "q"})  # no doc_id
    return write(folder / "20250801_101010_samples_p3.jsonl", lines)


def o3_log(folder: Path, version: str = "0.3") -> Path:
    rows = [("iBY0", "Color, Shape", "shape, color"), ("iBY1", "Color, Pattern", "Color"),
            ("iBY2", "Location", "location"), ("iBY0", "Color, Shape", "Color, Shape")]
    return write(folder / "20250801_101010_samples_o3.jsonl", [
        line(version, i, answer, text, f"O3 question {i}{SALBENCH_SUFFIX}",
             salbench_metrics(image, text, answer, O3),
             doc={"question": f"O3 question {i}", "answer": answer, "image_id": image})
        for i, (image, answer, text) in enumerate(rows)])


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test: a rescore sends nothing."""
    def refuse(self, address):
        raise AssertionError(f"a connection to {address} was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    with pytest.raises(AssertionError, match="attempted"):  # the guard itself works
        socket.create_connection(("127.0.0.1", 9))


def test_metrics_by_hand_bad_lines_counted_and_nothing_sent(tmp_path, no_network):
    logs = tmp_path / "logs" / "Qwen__Qwen2-VL-7B-Instruct"
    p3, o3 = p3_log(logs), o3_log(logs)
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    # Each bad line is one warning naming its file and line.
    assert f"{p3} line 4: not JSON (the file ends mid-line)" not in result.stderr
    assert f"{p3} line 4: not JSON" in result.stderr
    assert f"{p3} line 5: a JSON list, not an object" in result.stderr
    assert f"{p3} line 8: no doc_id" in result.stderr

    metrics = load(out)
    assert list(metrics) == ["P3", "O3"]
    strict, lenient = metrics["P3"]["strict"], metrics["P3"]["lenient"]
    assert (strict["n"], strict["n_errors"], strict["n_unparsed"]) == (3, 2, 1)
    assert strict["exact_match"] == pytest.approx(1 / 3)
    assert strict["macro_f1"] == pytest.approx(1 / 3, abs=1e-6)  # color 1, others 0
    assert lenient["exact_match"] == pytest.approx(2 / 3)
    # lenient: color 1; orientation P 1/2, R 1 -> 2/3; size 0
    assert lenient["macro_f1"] == pytest.approx((1 + 2 / 3) / 3, abs=1e-6)
    o3 = metrics["O3"]["strict"]
    assert (o3["n"], o3["n_errors"]) == (4, 0)
    assert o3["exact_match"] == pytest.approx(3 / 4)
    assert o3["sample_f1"] == pytest.approx((3 + 2 / 3) / 4, abs=1e-6)
    # color, shape and location right every time; pattern missed; three classes never seen
    assert o3["macro_f1"] == pytest.approx(3 / 7, abs=1e-6)

    records = {r["id"]: r for r in journal(out)}
    assert sorted(records) == ["O3/iBY0", "O3/iBY0#3", "O3/iBY1", "O3/iBY2", "P3/img_000",
                               "P3/img_001", "P3/img_002", "P3/img_003", "P3/img_004"]
    first = records["P3/img_000"]
    assert first["metadata"] | {"lmms_eval": None} == {
        "config": "P3", "task": "D", "dataset": "P3", "image_id": "img_000", "row": 0,
        "shots": 0, "prompt": "lmms-eval", "lmms_eval": None}
    assert first["metadata"]["lmms_eval"]["exact_match"] == 1.0
    assert first["prompt"] == [{"role": "user", "parts": [QUESTION + SALBENCH_SUFFIX]}]
    assert records["P3/img_003"]["response"]["error"].startswith("empty response")
    assert FAILED in records["P3/img_004"]["response"]["error"]
    assert records["P3/img_004"]["scores"] == {}

    info = load(out, "run.json")
    assert info["backend"] == {"kind": "rescored", "model": "Qwen__Qwen2-VL-7B-Instruct",
                               "tool": "lmms-eval"}
    assert info["counts"]["requests_sent"] == 0 and info["counts"]["records"] == 9
    assert info["options"]["prompt"] == "lmms-eval" and info["options"]["shots"] == 0
    source = info["rescored_from"]
    assert source["tool"] == "lmms-eval" and source["requests_sent"] == 0
    assert source["bad_lines"] == 3
    by_task = {f["task"]: f for f in source["files"]}
    assert (by_task["p3"]["lines"], by_task["p3"]["bad_lines"]) == (8, 3)
    assert (by_task["o3"]["lines"], by_task["o3"]["bad_lines"]) == (4, 0)
    assert source["checks"]["lmms_eval_exact_match"] == {"compared": 9, "differ": 0}
    assert "agrees with the strict parser on 9 of 9" in result.stderr


def test_every_lmms_eval_version_layout_reads_the_same(tmp_path):
    """0.3 (doc kept, nested lists), 0.4 (doc dropped) and 0.7 (flattened, token counts)
    logs of the same answers give the same metrics."""
    metrics = {}
    for version in ("0.3", "0.4", "0.7"):
        logs = tmp_path / version / "m"
        p3_log(logs, version)
        out = tmp_path / f"run-{version}"
        assert invoke("rescore", "--from", "lmms-eval", logs, "--out", out,
                      "--no-report").exit_code == 0
        metrics[version] = load(out)
    assert metrics["0.3"] == metrics["0.4"] == metrics["0.7"]


def test_raw_response_is_scored_filtered_one_kept_and_tokens_counted(tmp_path):
    """When lmms-eval's filter changed the text (reasoning tags stripped), `resps` is in
    the line: the raw answer is what visioneval reads (its thinking set aside, as in a
    visioneval run, and kept); the filtered one is recorded."""
    logs = tmp_path / "m"
    raw = "<think>it is the hue</think> color"
    write(logs / "20250801_101010_samples_p3_box.jsonl", [
        line("0.7", 0, "color", raw, QUESTION, salbench_metrics("a", "color", "color", P3),
             filtered="color", tokens={"input_tokens": 700, "output_tokens": 9}),
        line("0.7", 1, "size", "size", QUESTION, salbench_metrics("b", "size", "size", P3),
             tokens={"input_tokens": 690, "output_tokens": 1})])
    out = tmp_path / "run"
    assert invoke("rescore", "--from", "lmms-eval", logs, "--out", out,
                  "--no-report").exit_code == 0
    records = {r["id"]: r for r in journal(out)}
    first = records["P3_box/a"]
    assert first["response"]["text"] == "color" and raw.startswith("<think>")
    assert first["response"]["reasoning"] == "it is the hue"
    assert first["metadata"]["lmms_eval"]["filtered_resps"] == "color"
    assert first["scores"]["strict"]["exact_match"] == 1.0
    assert first["scores"]["lenient"]["exact_match"] == 1.0
    assert "filtered_resps" not in records["P3_box/b"]["metadata"]["lmms_eval"]
    info = load(out, "run.json")
    assert (info["counts"]["prompt_tokens"], info["counts"]["completion_tokens"]) == (1390, 10)
    assert info["rescored_from"]["checks"]["raw_differs_from_filtered"] == 1


def test_results_file_gives_model_version_limit_and_generation(tmp_path):
    logs = tmp_path / "out" / "Qwen__Qwen2-VL-7B-Instruct"
    p3_log(logs)
    results_file(logs, "20250801_101010", {"p3": {
        "generation_kwargs": {"max_new_tokens": 128, "temperature": 0},
        "_n": {"original": 2589, "effective": 5}}})
    out = tmp_path / "run"
    assert invoke("rescore", "--from", "lmms-eval", logs, "--out", out,
                  "--no-report").exit_code == 0
    info = load(out, "run.json")
    assert info["backend"]["model"] == "Qwen/Qwen2-VL-7B-Instruct"
    assert info["options"]["num_samples"] == 5
    assert info["generation"] == {"temperature": 0, "max_tokens": 128, "seed": None}
    assert info["rescored_from"]["lmms_eval_version"] == "main@75571cfe"
    assert "SECRET" not in (out / "run.json").read_text()
    given = tmp_path / "run-named"
    assert invoke("rescore", "--from", "lmms-eval", logs, "--out", given, "--model", "qwen7b",
                  "--no-report").exit_code == 0
    assert load(given, "run.json")["backend"]["model"] == "qwen7b"


def test_same_answers_as_a_real_run_give_its_ids_and_numbers(synth_data, tmp_path):
    """A real (builtin) run's answers, written as lmms-eval would log them and re-scored,
    give the real run's sample ids and metrics; compare puts the two side by side and
    sees the same samples; report opens the rescored run."""
    real = tmp_path / "real"
    result = invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    synth_data, "--configs", "P3,P3_box", "--prompt", "lmms-eval", "--out", real,
                    "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    logs = tmp_path / "logs" / "random"
    for config in ("P3", "P3_box"):
        lines = []
        for record in journal(real):
            if record["group"] != config:
                continue
            meta, text = record["metadata"], record["response"]["text"]
            prompt = next(p for p in record["prompt"][0]["parts"] if isinstance(p, str))
            lines.append(line("0.7", meta["row"], record["target"], text, prompt,
                              salbench_metrics(meta["image_id"], text, record["target"], P3)))
        write(logs / f"20250801_101010_samples_{config.lower()}.jsonl", lines[::-1])
    rescored = tmp_path / "rescored"
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", rescored)
    assert result.exit_code == 0, result.output
    assert load(rescored) == load(real)
    real_records = {r["id"]: r for r in journal(real)}
    for record in journal(rescored):
        twin = real_records[record["id"]]
        assert set(record) == set(twin)
        assert set(twin["metadata"]) <= set(record["metadata"])
        assert (record["parsed"], record["scores"]) == (twin["parsed"], twin["scores"])
    compared = invoke("compare", real, rescored)
    assert compared.exit_code == 0, compared.output
    assert "sample sets differ" not in compared.stderr
    rows = [re.split(r"\s{2,}", r.strip()) for r in compared.stdout.splitlines()
            if r.startswith("random (")]
    # The same numbers (and cost); only the run's name beside the model differs.
    assert [r[0] for r in rows] == ["random (real)", "random (rescored)"]
    assert len(rows) == 2 and len(rows[0]) > 3 and rows[0][1:] == rows[1][1:]
    assert invoke("compare", rescored, real, "--common-only").exit_code == 0
    again = invoke("rescore", "--from", "lmms-eval", logs, "--out", rescored)
    assert again.exit_code == 2 and "already holds a run" in again.stderr
    resumed = invoke("salbench", "--resume", rescored, "--no-progress")
    assert resumed.exit_code == 2 and "nothing to resume" in resumed.stderr
    from visioneval.report.viewer import Viewer

    assert Viewer.open(rescored).rows({})["total"] == len(real_records)  # `visioneval view`
    report = invoke("report", rescored)
    assert report.exit_code == 0, report.output
    page = (rescored / "report.html").read_text()
    assert "rescored" in page and "P3_box" in page


def test_unknown_task_is_one_error_listing_the_known_ones(tmp_path):
    logs = tmp_path / "m"
    p3_log(logs)
    write(logs / "20250801_101010_samples_mmmu_val.jsonl", [{"doc_id": 0}])
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", tmp_path / "run")
    assert result.exit_code == 2
    message = result.stderr.replace("\n", " ")
    assert "task 'mmmu_val' is not one visioneval re-scores" in message
    assert "salbench: p3, p3_box, p3_box_img, o3, o3_box, o3_box_img" in message
    assert "unig2u_illusionbench_arshia_icon_shape_test" in message
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()


def test_not_a_samples_file_or_nothing_found_is_an_error(tmp_path):
    stray = tmp_path / "notes.jsonl"
    stray.write_text("{}\n")
    result = invoke("rescore", "--from", "lmms-eval", stray)
    assert result.exit_code == 2 and "not an lmms-eval samples file" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("rescore", "--from", "lmms-eval", empty)
    assert result.exit_code == 2 and "no lmms-eval samples file" in result.stderr


def test_two_runs_of_one_task_or_two_models_are_refused(tmp_path):
    p3_log(tmp_path / "a" / "m1")
    later = tmp_path / "a" / "m1" / "20250901_000000_samples_p3.jsonl"
    later.write_text((tmp_path / "a" / "m1" / "20250801_101010_samples_p3.jsonl").read_text())
    result = invoke("rescore", "--from", "lmms-eval", tmp_path / "a")
    assert result.exit_code == 2 and "several logs of one task" in result.stderr
    p3_log(tmp_path / "b" / "m1")
    o3_log(tmp_path / "b" / "m2")
    result = invoke("rescore", "--from", "lmms-eval", tmp_path / "b")
    assert result.exit_code == 2 and "different models" in result.stderr
    out = tmp_path / "named"
    assert invoke("rescore", "--from", "lmms-eval", tmp_path / "b", "--model", "x", "--out",
                  out, "--no-report").exit_code == 0
    assert json.loads((out / "run.json").read_text())["backend"]["model"] == "x"
