"""Vernier acuity end to end, and through it what every classic paradigm shares: stimuli that
describe themselves, the pixel geometry the trial states, the builtin reader, the loopback
observer recovered through real HTTP, failed requests and unreadable answers kept out of the
curve, bad rows skipped with one line."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke
from PIL import Image

from visioneval import api
from visioneval.benchmarks.vernier.paradigm import Vernier
from visioneval.engine.options import EngineOptions
from visioneval.loopback.observer import Observer, answer_observer, parse_curves
from visioneval.paradigms.answers import number, option
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.paradigm import Design
from visioneval.paradigms.trial import read_trial
from visioneval.stimuli.srgb import decode

ENGINE = EngineOptions(cache_path=None, concurrency=16)


@pytest.fixture(scope="module")
def stimuli(tmp_path_factory) -> Path:
    """The default levels, 4 trials each (32 rows)."""
    root = tmp_path_factory.mktemp("vernier")
    write_dataset(Vernier(), root, Design(trials=4), seed=5)
    return root


def _rows(root: Path) -> list[dict]:
    return pq.read_table(root / "vertical" / "shard_00000.parquet").to_pylist()


def test_every_stimulus_carries_its_trial_and_the_same_seed_draws_the_same_bytes(
        stimuli, tmp_path):
    rows = _rows(stimuli)
    assert len(rows) == 32
    for row in rows:
        trial = read_trial(row["image"]["bytes"])
        assert (trial.paradigm, trial.condition, trial.kind) == ("vernier", "vertical",
                                                                 "comparison")
        assert trial.level == row["level"] and trial.answer == row["answer"]
        assert trial.answer == ("right" if trial.level > 0 else "left")
        assert trial.rendering is not None and trial.rendering["mixing"] == "linear light"
    again = tmp_path / "again"
    write_dataset(Vernier(), again, Design(trials=4), seed=5)
    assert [r["image"]["bytes"] for r in _rows(again)] == [r["image"]["bytes"] for r in rows]
    other = tmp_path / "other"
    write_dataset(Vernier(), other, Design(trials=4), seed=6)
    assert _rows(other)[0]["image"]["bytes"] != rows[0]["image"]["bytes"]


def _centroids(png: bytes) -> tuple[float, float]:
    codes = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)
    dark = decode(128) - decode(codes)
    rows = np.flatnonzero(dark.sum(axis=1) > 0.01)
    split = int(np.argmax(np.diff(rows))) + 1
    columns = np.arange(codes.shape[1]) + 0.5
    found = []
    for part in (dark[rows[:split]], dark[rows[split:]]):
        weights = part.sum(axis=0)
        found.append(float((weights * columns).sum() / weights.sum()))
    return found[0], found[1]


def test_the_pixels_hold_the_offset_the_trial_states(stimuli):
    """The lower segment's centre of light lies `level` px right of the upper one's, to a
    few hundredths of a pixel after 8-bit encoding, and where the trial says it is."""
    for row in _rows(stimuli):
        trial = read_trial(row["image"]["bytes"])
        upper, lower = _centroids(row["image"]["bytes"])
        assert lower - upper == pytest.approx(trial.level, abs=0.03)
        assert upper == pytest.approx(trial.stimulus["upper_x"], abs=0.03)


def test_answers_are_read_strictly():
    assert option("Right.", ("left", "right")) == "right"
    assert option("The lower line is to the LEFT of the upper one", ("left", "right")) == "left"
    assert option("left or right? I cannot tell", ("left", "right")) is None
    assert option("upward", ("left", "right")) is None
    assert number("About 45%.") == 45.0 and number("between 40 and 50") is None


def test_the_builtin_reader_sees_every_offset_and_the_run_prints_within_100_columns(
        stimuli, tmp_path):
    result = invoke("vernier", "--data", stimuli, "--backend", "builtin", "--model",
                    "reader", "--out", tmp_path / "run", "--no-progress", "--no-cache",
                    "--no-report", "--bootstrap", "50")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 100
    metrics = api.load(tmp_path / "run").metrics
    curve = metrics["curves"][0]
    assert [p["p"] for p in curve["points"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert curve["status"] == "reached" and abs(curve["pse"]) < 0.5
    assert curve["jnd"] < 0.5 and metrics["n_unparsed"] == 0
    assert "Vernier threshold" in [h["quantity"] for h in metrics["human"]]


@pytest.mark.slow
def test_a_known_observer_is_recovered_through_real_http(serve, tmp_path):
    """One observer (PSE 0.3 px, JND 1 px, lapse 0.02) answering 60 trials a level: the fit
    lands near both and its intervals hold them; the figure in segment lengths is the same
    JND over 60 px."""
    root = tmp_path / "data"
    write_dataset(Vernier(), root, Design(trials=60), seed=1)
    observer = Observer(parse_curves("vernier=0.3:1:0.02"), seed=4)
    server = serve(answer=answer_observer(observer))
    result = api.run("vernier", model="m", base_url=f"{server.base_url}/v1",
                     options={"data": str(root)}, out=tmp_path / "run", engine=ENGINE,
                     report=False)
    curve = result.metrics["curves"][0]
    assert curve["n"] == 480 and curve["status"] == "reached"
    assert curve["pse"] == pytest.approx(0.3, abs=0.25)
    assert curve["jnd"] == pytest.approx(1.0, rel=0.2)
    low, high = curve["pse_ci95"]
    assert low < 0.3 < high
    low, high = curve["jnd_ci95"]
    assert low < 1.0 < high
    share = next(s for s in curve["scaled"] if s["name"] == "JND" and "segment" in s["unit"])
    assert share["value"] == pytest.approx(100 * curve["jnd"] / 60.0)


@pytest.mark.slow
def test_failed_requests_and_unreadable_answers_stay_out_of_the_curve(serve, stimuli,
                                                                     tmp_path):
    failing = serve(answer=lambda prompt: "left", fail_rate=0.3, faults=("500",),
                    retry_after_s=0.0)
    result = api.run("vernier", model="m", base_url=f"{failing.base_url}/v1",
                     options={"data": str(stimuli), "bootstrap": 0}, out=tmp_path / "a",
                     engine=EngineOptions(cache_path=None, concurrency=4, max_attempts=1),
                     report=False)
    metrics = result.metrics
    assert metrics["n_errors"] == result.n_errors > 0
    assert metrics["n"] + metrics["n_errors"] == 32
    assert sum(p["n"] for p in metrics["curves"][0]["points"]) == metrics["n"]
    mute = serve(answer=lambda prompt: "I cannot tell.")
    silent = api.run("vernier", model="m", base_url=f"{mute.base_url}/v1",
                     options={"data": str(stimuli), "bootstrap": 0}, out=tmp_path / "b",
                     engine=ENGINE, report=False).metrics
    assert silent["n_unparsed"] == 32
    assert all(p["k"] == 0 for p in silent["curves"][0]["points"])
    assert silent["curves"][0]["status"] == "not reached"


def test_a_malformed_row_is_skipped_with_one_line_naming_file_and_field(serve, stimuli,
                                                                        tmp_path):
    root = tmp_path / "data"
    (root / "vertical").mkdir(parents=True)
    path = root / "vertical" / "shard_00000.parquet"
    rows = _rows(stimuli)[:6]
    rows[0]["level"] = math.nan
    rows[1]["answer"] = "up"
    rows[2]["stimulus"] = "{not json"
    rows[3]["paradigm"] = "crowding"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(
        stimuli / "vertical" / "shard_00000.parquet")), path)
    server = serve(answer=lambda prompt: "right")
    result = invoke("vernier", "--data", root, "--backend", "openai", "--base-url",
                    f"{server.base_url}/v1", "--model", "m", "--out", tmp_path / "run",
                    "--no-progress", "--no-cache", "--no-report", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 4, result.stderr
    for field in ("level", "answer", "stimulus", "paradigm"):
        assert any(str(path) in line and f"`{field}`" in line for line in skipped), field
    assert server.stats.requests == 2
