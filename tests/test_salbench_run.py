"""SalBench end to end: the real command against the loopback server over real HTTP."""

from __future__ import annotations

import csv
import sqlite3

import pytest
from cli_helpers import invoke, journal, load, salbench_args

from visioneval.io.parquet import iter_rows, parquet_files
from visioneval.loopback.server import answer_popout

CONFIGS = ["P3", "P3_box", "P3_box_img"]


def test_openai_run_writes_every_file(serve, synth_data, tmp_path):
    server = serve(answer=answer_popout)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                   "--tasks", "D,R,VR"))
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert list(metrics) == CONFIGS
    for config in CONFIGS:
        for parser in ("strict", "lenient"):
            block = metrics[config][parser]
            assert (block["n"], block["n_errors"]) == (8, 0)
            assert 0.0 <= block["macro_f1"] <= 1.0
            assert set(block["per_class"]) == {"orientation", "color", "size"}
    rows = list(csv.reader((out / "table1.csv").open()))
    assert rows[0] == ["Model", "Shot", "Detection_NAT", "Detection_SYN", "Referring_NAT",
                       "Referring_SYN", "VisualRef_NAT", "VisualRef_SYN"]
    assert rows[1][:2] == ["m", "0"] and rows[1][2] == "" and rows[1][3] == \
        f"{100 * metrics['P3']['strict']['macro_f1']:.1f}"
    assert (out / "table1_exact_match.csv").exists()
    records = journal(out)
    assert len(records) == 24 and len({r["id"] for r in records}) == 24
    info = load(out, "run.json")
    assert info["status"] == "finished" and info["counts"]["records"] == 24
    assert info["generation"] == {"temperature": 0.0, "max_tokens": 128, "seed": None}
    assert info["backend"]["base_url"] == server.base_url + "/v1"
    assert len(info["dataset"]["fingerprint"]) == 64
    assert "Detection" in result.stdout and "Visual Ref." in result.stdout


def test_ollama_backend_runs_the_same_benchmark(serve, synth_data, tmp_path):
    server = serve(answer=answer_popout)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   backend="ollama"))
    assert result.exit_code == 0, result.output
    assert load(out)["P3"]["strict"]["n"] == 8
    assert load(out, "run.json")["backend"]["kind"] == "ollama"


@pytest.mark.slow
def test_identical_rerun_is_answered_from_the_cache(serve, synth_data, tmp_path):
    server = serve()
    invoke(*salbench_args(server, synth_data, tmp_path / "a", "--configs", "P3"))
    assert server.stats.requests == 8
    result = invoke(*salbench_args(server, synth_data, tmp_path / "b", "--configs", "P3"))
    assert result.exit_code == 0 and server.stats.requests == 8  # nothing sent
    assert load(tmp_path / "b") == load(tmp_path / "a")
    assert load(tmp_path / "b", "run.json")["counts"]["cache_hits"] == 8
    invoke(*salbench_args(server, synth_data, tmp_path / "c", "--configs", "P3", "--no-cache"))
    assert server.stats.requests == 16
    # A different generation setting is a different request.
    invoke(*salbench_args(server, synth_data, tmp_path / "d", "--configs", "P3",
                          "--max-tokens", "64"))
    assert server.stats.requests == 24


def test_api_key_reaches_the_server_and_no_file(serve, synth_data, tmp_path, monkeypatch):
    secret = "sk-test-visioneval-3f9a1c"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server = serve(required_key=secret, fail_first=2, faults=("500",))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "-v",
                                   "--api-key-env", "OPENAI_API_KEY"))
    assert result.exit_code == 0, result.output
    assert secret in server.stats.seen_auth
    assert load(out, "run.json")["backend"]["key_env_used"] == "OPENAI_API_KEY"
    written = [p for p in (tmp_path).rglob("*") if p.is_file()]
    assert any(p.name == "responses.sqlite3" for p in written)
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in result.output


@pytest.mark.slow
def test_failed_requests_are_errors_never_wrong_answers(serve, synth_data, tmp_path):
    server = serve(fail_rate=0.2, faults=("429", "500", "drop"), seed=7)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--max-attempts", "1",
                                   "--splits", "synthetic"))
    assert result.exit_code == 1  # finished, but some samples have no answer
    assert "--resume" in result.stderr
    records = journal(out)
    assert len(records) == 24  # every sample ended scored or marked error
    errors = [r for r in records if r["response"]["error"]]
    assert 0 < len(errors) < 24
    assert all(r["scores"] == {} and r["parsed"] == {} for r in errors)
    metrics = load(out)
    for config in CONFIGS:
        block = metrics[config]["strict"]
        assert block["n"] + block["n_errors"] == 8
        assert block["n_errors"] == sum(1 for r in errors if r["group"] == config)

    # Resuming retries only the failed samples; the result equals a clean run.
    server.script.fail_rate = 0.0
    before = server.stats.requests
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert server.stats.requests - before == len(errors)
    clean = tmp_path / "clean"
    invoke(*salbench_args(server, synth_data, clean, "--splits", "synthetic", "--no-cache"))
    assert load(out) == load(clean)


def test_retries_absorb_a_twenty_percent_failure_rate(serve, synth_data, tmp_path):
    server = serve(fail_rate=0.2, faults=("429", "500", "drop"), seed=1)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic"))
    assert result.exit_code == 0, result.output
    assert server.stats.faults > 0
    assert all(load(out)[c]["strict"]["n_errors"] == 0 for c in CONFIGS)
    attempts = [r["response"]["attempts"] for r in journal(out)]
    assert max(attempts) >= 2


def test_preflight_failure_exits_2_without_a_run_directory(serve, synth_data, tmp_path):
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                    "--model", "m", "--data-dir", synth_data, "--out", out, "--configs", "P3")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: cannot reach openai server")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
    server = serve(models=("other",))
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3"))
    assert result.exit_code == 2 and "model 'm' is not served" in result.stderr
    assert not out.exists()
    result = invoke(*salbench_args(server, synth_data, out))  # no O3 folders in the data
    assert result.exit_code == 2 and "has no folder O3, O3_box, O3_box_img" in result.stderr


def test_missing_key_for_hosted_api_exits_2(synth_data, tmp_path):
    result = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--data-dir",
                    synth_data, "--out", tmp_path / "run", "--configs", "P3")
    assert result.exit_code == 2 and "missing API key: set $OPENAI_API_KEY" in result.stderr


@pytest.mark.parametrize("style", ["paper", "lmms-eval"])
def test_zero_shot_prompt_is_the_dataset_question(serve, synth_data, tmp_path, style):
    server = serve()
    server.stats.keep_bodies = True
    invoke(*salbench_args(server, synth_data, tmp_path / "run", "--configs", "P3_box",
                          "--num-samples", "2", "--prompt", style, "--no-cache"))
    files = parquet_files(synth_data / "P3_box")
    questions = [row.values["question"] for row in iter_rows(files, ["question"], limit=2)]
    sent = [b["messages"][0]["content"] for b in server.stats.bodies]
    assert len(sent) == 2
    for parts in sent:
        assert [p["type"] for p in parts] == ["image_url", "text"]
    texts = sorted(p[1]["text"] for p in sent)
    suffix = "\nAnswer the question using a single word or phrase." if style == "lmms-eval" \
        else ""
    assert texts == sorted(q + suffix for q in questions)
    assert all(t.startswith("Context: This image depicts a scene with  ") for t in texts)


def test_three_shot_prompt_layout(serve, synth_data, tmp_path):
    server = serve()
    server.stats.keep_bodies = True
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "--shots", "3",
                                   "--num-samples", "4", "--no-cache"))
    assert result.exit_code == 0, result.output
    first = server.stats.bodies[0]["messages"][0]["content"]
    kinds = [p["type"] for p in first]
    assert kinds == ["text", "image_url", "text", "image_url", "text", "image_url", "text",
                     "image_url", "text"]
    assert first[0]["text"].startswith("Context: Given this list of low level visual features")
    assert first[0]["text"].endswith("\nFor examples:")
    captions = [first[i]["text"] for i in (2, 4, 6)]
    labels = [c.split("different ")[1].split(" compares")[0] for c in captions]
    assert sorted(labels) == ["color", "orientation", "size"]  # one example per class
    assert first[-1]["text"].startswith("Task: Examine this image")
    urls = [p["image_url"]["url"] for p in first if p["type"] == "image_url"]
    assert urls[-1] not in urls[:-1]  # the query is never its own example
    for body in server.stats.bodies:
        content = body["messages"][0]["content"]
        shots = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
        assert len(shots) == 4 and shots[-1] not in shots[:-1]
    records = journal(out)
    assert all(r["metadata"]["shots"] == 3 for r in records)


def test_cache_database_holds_no_image_bytes(serve, synth_data, tmp_path):
    server = serve()
    invoke(*salbench_args(server, synth_data, tmp_path / "run", "--configs", "P3"))
    db = next((tmp_path / "xdg-cache").rglob("responses.sqlite3"))
    rows = sqlite3.connect(db).execute("SELECT key, response FROM responses").fetchall()
    assert len(rows) == 8 and all(len(r[1]) < 1000 for r in rows)
