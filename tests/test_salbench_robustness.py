"""Bad rows, SIGKILL and resume, the offline demo: the promises a user relies on."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args, spawn
from helpers import png_bytes

from visioneval.io.parquet import write_hf_parquet

QUESTION = ("Context: Given this list of low level visual features defined according to feature "
            "integration theory: Orientation, Color, Size. Task: Examine this image and identify "
            "the feature that makes one object notably different from the others. Answer the "
            "question using a single word or phrase.")


def _row(image_id, answer="color", image=None, question=QUESTION):
    image = {"bytes": png_bytes(), "path": f"{image_id}.png"} if image is None else image
    return {"image": image, "question": question, "answer": answer, "image_id": image_id}


def test_bad_rows_are_named_skipped_and_counted(serve, tmp_path):
    rows = [
        _row("good-1"),
        _row("broken-png", image={"bytes": png_bytes()[:40], "path": "x.png"}),
        _row("not-an-image", image={"bytes": b"GIF? no, plain text", "path": "x.png"}),
        _row("path-only", image={"bytes": None, "path": "elsewhere.png"}),
        _row("no-answer", answer=None),
        _row("odd-label", answer="texture"),
        _row("good-2", answer="size"),
        _row(None, answer="focus"),
    ]
    write_hf_parquet(tmp_path / "data" / "P3" / "test-00000.parquet", rows, ["image"])
    # A second file that lacks a column entirely.
    write_hf_parquet(tmp_path / "data" / "P3" / "test-00001.parquet",
                     [{"image": {"bytes": png_bytes(), "path": "a.png"}, "question": QUESTION,
                       "image_id": "no-answer-column"}], ["image"])
    server = serve()
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, tmp_path / "data", out, "--configs", "P3"))
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    expected = {
        "not-an-image": "undecodable image: not a PNG",
        "path-only": "image has no bytes (only a path: elsewhere.png)",
        "broken-png": "undecodable image: corrupt or truncated image/png data (40 bytes)",
        "no-answer": "column 'answer' is empty", "odd-label": "label(s) texture outside",
        "#7": "label(s) focus outside", "test-00001.parquet (every row)":
        "missing column(s) answer",
    }
    for name, reason in expected.items():
        assert any("skipped P3 row" in ln and name in ln and reason in ln for ln in lines), \
            (name, lines)
    assert len(lines) == len(expected)
    assert load(out)["P3"]["strict"]["n"] == 2
    assert load(out, "run.json")["counts"]["skipped_rows"] == len(expected)
    assert {r["id"] for r in journal(out)} == {"P3/good-1", "P3/good-2"}


@pytest.mark.slow
def test_sigkill_then_resume_equals_an_uninterrupted_run(serve, synth_data, tmp_path):
    server = serve(latency_s=0.05)
    out = tmp_path / "killed"
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    proc = spawn(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                "--concurrency", "2", "--no-cache"), env=env)
    journal_file = out / "samples.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline:
        if journal_file.exists() and journal_file.read_bytes().count(b"\n") >= 6:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = journal_file.read_bytes().count(b"\n")
    assert 6 <= done_before < 24, "the run was not interrupted mid-way"
    sent_before = server.stats.requests

    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    records = journal(out)
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)) == 24  # none lost, none run twice
    # Only the samples in flight at the kill (at most --concurrency) were sent twice.
    assert server.stats.requests - sent_before <= 24 - done_before + 2
    info = load(out, "run.json")
    assert [s["status"] for s in info["sessions"]] == ["killed", "finished"]
    assert info["sessions"][1]["resumed_from"] == done_before

    clean = tmp_path / "clean"
    invoke(*salbench_args(server, synth_data, clean, "--splits", "synthetic", "--no-cache"))
    assert load(out) == load(clean)


def test_resume_refuses_changed_data(serve, synth_data, tmp_path):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(synth_data, data)
    server = serve()
    out = tmp_path / "run"
    invoke(*salbench_args(server, data, out, "--configs", "P3"))
    (data / "P3" / "shard_00000.parquet").write_bytes(
        (synth_data / "P3_box" / "shard_00000.parquet").read_bytes())
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 2 and "the dataset changed since this run started" in result.stderr


@pytest.mark.slow
def test_demo_runs_offline_and_prints_the_table(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = spawn("demo", "--n", "12", "--no-progress", cwd=tmp_path, env=env)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    for task in ("Detection", "Referring", "Visual Ref."):
        assert task in stdout
    runs = list((tmp_path / "results").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("salbench-popout-")
    metrics = load(runs[0])
    assert all(metrics[c]["strict"]["n"] == 12 for c in ("P3", "P3_box", "P3_box_img"))
    # popout really sees: far above the 1/3 chance level.
    assert metrics["P3"]["strict"]["exact_match"] > 0.6
    assert Path(tmp_path / "cache" / "visioneval" / "demo").is_dir()


@pytest.mark.slow
def test_ctrl_c_keeps_finished_samples_and_says_how_to_resume(serve, synth_data, tmp_path):
    server = serve(latency_s=0.05)
    out = tmp_path / "run"
    proc = spawn(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                "--concurrency", "2", "--no-cache"),
                 env={"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")})
    deadline = time.time() + 60
    while time.time() < deadline:
        path = out / "samples.jsonl"
        if path.exists() and path.read_bytes().count(b"\n") >= 4:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    # Spelled as the run was started (python -m), so it works when pasted.
    assert f"continue with: {sys.executable} -m visioneval salbench --resume {out}" in \
        flat(stderr)
    info = load(out, "run.json")
    assert info["status"] == "interrupted"
    assert info["counts"]["records"] == len(journal(out)) >= 4
    assert load(out)["P3"]["strict"]["n"] >= 1  # partial metrics are written too
