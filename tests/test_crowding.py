"""Crowding (`visioneval crowding`): each stimulus carries its trial and is the same for the
same seed; the Landolt Cs are where and what the trial says, measured from the pixels; the
builtin reader reads the middle C's gap at every tested spacing from the pixels alone (not
the text chunk) and is misled only when flankers overlap the target; the target alone is a
control curve with no fit; the critical spacing is withheld, with the reason, where the
target alone was not legible; a known observer's critical spacing is recovered through
real HTTP; a malformed row is skipped with one line naming file and field; the terminal
output fits 100 columns."""

from __future__ import annotations

import io
import json
import math
import statistics
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke, load
from PIL import Image

from visioneval import api
from visioneval.benchmarks.crowding.paradigm import DIAMETERS, SIZE, SPACINGS, Crowding
from visioneval.benchmarks.crowding.reader import read
from visioneval.benchmarks.crowding.summaries import critical_spacing, size_exponent
from visioneval.engine.options import EngineOptions
from visioneval.loopback.observer import Observer, answer_observer, parse_curves
from visioneval.loopback.server import ServerScript, ThreadedServer
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.metrics import Curve, Point
from visioneval.paradigms.paradigm import Design
from visioneval.paradigms.trial import read_trial
from visioneval.stats.binomial import wilson
from visioneval.stats.psychometric import criterion_level
from visioneval.stimuli.srgb import decode

PARADIGM = Crowding()
CONDITIONS = {c.name: c for c in PARADIGM.conditions()}


@pytest.fixture(scope="module")
def small_data(tmp_path_factory) -> Path:
    """Every condition, 1 trial a level (8 + 8 + 2 stimuli), as `data synth-crowding`."""
    root = tmp_path_factory.mktemp("crowding")
    assert invoke("data", "synth-crowding", "--out", root, "--n", "1").exit_code == 0
    return root


def darkness(png: bytes) -> np.ndarray:
    """Each pixel's darkness in linear light: 0 on the white background, 1 black."""
    with Image.open(io.BytesIO(png)) as image:
        return 1.0 - decode(np.asarray(image.convert("L"), dtype=np.float64))


def test_a_stimulus_carries_its_trial_and_is_the_same_for_the_same_seed():
    flanked = CONDITIONS["flanked"]
    made = PARADIGM.draw(flanked, 1.7, 5, seed=11)
    assert made.png == PARADIGM.draw(flanked, 1.7, 5, seed=11).png
    assert read_trial(made.png).model_dump(exclude={"rendering"}) == made.trial.model_dump(
        exclude={"rendering"})
    trial = made.trial
    assert (trial.level, trial.unit, trial.kind, trial.chance) == (
        1.7, "target diameters", "choice", 0.25)
    assert trial.answer == "down" and trial.options == ("up", "down", "left", "right")
    assert "Options: up, down, left, right." in made.question
    others = {json.dumps(PARADIGM.draw(flanked, 1.7, 5, seed=s).trial.stimulus,
                         sort_keys=True) for s in range(6)}
    assert len(others) > 1  # the flankers' gaps are drawn anew from each seed
    alone = PARADIGM.draw(CONDITIONS["unflanked"], 32.0, 0, seed=3).trial
    assert (alone.unit, alone.stimulus["flankers"], alone.stimulus["diameter"]) == (
        "px", 0, 32.0)


def _centroid(profile: np.ndarray, start: int) -> float:
    return start + float((profile * (np.arange(len(profile)) + 0.5)).sum() / profile.sum())


def _edges(profile: np.ndarray, start: int) -> tuple[int, int]:
    """The first and past-the-last pixel holding ink (more than half a pixel's worth)."""
    found = np.flatnonzero(profile > 0.5)
    return start + int(found[0]), start + int(found[-1]) + 1


@pytest.mark.parametrize("name, spacing", [("flanked", 1.25), ("flanked-small", 2.5)])
def test_the_cs_are_where_and_what_the_trial_says_measured_from_the_pixels(name, spacing):
    made = PARADIGM.draw(CONDITIONS[name], spacing, 2, seed=4)
    geometry = made.trial.stimulus
    dark = darkness(made.png)
    diameter, centre = DIAMETERS[name], SIZE / 2
    assert geometry["diameter"] == diameter and geometry["spacing_px"] == spacing * diameter
    half = int(diameter / 2) + 2
    middle = slice(int(centre) - half, int(centre) + half)
    # the target's column through its centre crosses two strokes of a fifth of its diameter
    assert dark[middle, int(centre)].sum() == pytest.approx(2 * diameter / 5, abs=0.3)
    # its gap is where the trial says (index 2 of up, down, left, right): background at
    # the middle of the stroke on that side, ink on the opposite one
    assert geometry["gap"] == "left"
    assert dark[int(centre), int(centre - 0.4 * diameter)] < 0.05
    assert dark[int(centre), int(centre + 0.4 * diameter)] > 0.95
    # each flanker is centred where the spacing puts it: on the axis its gap is symmetric
    # about (the ink's centroid) and one radius in from its ring's uncut side
    s = geometry["spacing_px"]
    for side, (dx, dy) in {"up": (0, -1), "right": (1, 0), "down": (0, 1),
                           "left": (-1, 0)}.items():
        cx, cy = centre + dx * s, centre + dy * s
        x0, y0 = int(cx) - half, int(cy) - half
        window = dark[y0:y0 + 2 * half, x0:x0 + 2 * half]
        columns, rows = window.sum(axis=0), window.sum(axis=1)
        facing = geometry[f"flanker_{side}_gap"]
        if facing in ("up", "down"):
            assert _centroid(columns, x0) == pytest.approx(cx, abs=0.05), side
            top, bottom = _edges(rows, y0)
            found = top + diameter / 2 if facing == "up" else bottom - diameter / 2
            assert found == pytest.approx(cy, abs=1.0), side
        else:
            assert _centroid(rows, y0) == pytest.approx(cy, abs=0.05), side
            left, right = _edges(columns, x0)
            found = left + diameter / 2 if facing == "right" else right - diameter / 2
            assert found == pytest.approx(cx, abs=1.0), side
    # nothing else is drawn: the ink is five rings, each less its gap (about 0.2 x 0.2 D)
    ring = math.pi * ((diameter / 2) ** 2 - (0.3 * diameter) ** 2) - 0.04 * diameter ** 2
    assert dark.sum() == pytest.approx(5 * ring, rel=0.02)


def test_touching_flankers_leave_the_target_whole():
    """At 1 diameter the rings touch: a flanker's gap facing the target cuts nothing of it,
    so the target's pixels are those of the target alone."""
    flanked = PARADIGM.draw(CONDITIONS["flanked"], 1.0, 1, seed=9)
    facing_in = {"up": "down", "right": "left", "down": "up", "left": "right"}
    assert any(flanked.trial.stimulus[f"flanker_{side}_gap"] == facing
               for side, facing in facing_in.items())  # one cut points at the target
    alone = PARADIGM.draw(CONDITIONS["unflanked"], 64.0, 1, seed=9)
    assert flanked.trial.answer == alone.trial.answer
    rows, cols = np.mgrid[0:SIZE, 0:SIZE]
    inside = np.hypot(cols + 0.5 - SIZE / 2, rows + 0.5 - SIZE / 2) < 31.0
    assert np.array_equal(darkness(flanked.png)[inside], darkness(alone.png)[inside])


def _without_chunk(png: bytes) -> bytes:
    out = io.BytesIO()
    with Image.open(io.BytesIO(png)) as image:
        image.save(out, format="PNG")  # pixels only: no text chunk
    return out.getvalue()


def test_the_reader_reads_the_gap_at_the_closest_spacing_from_the_pixels_alone():
    for index in range(4):  # each gap direction once
        made = PARADIGM.draw(CONDITIONS["flanked"], SPACINGS[0], index, seed=100 + index)
        bare = _without_chunk(made.png)
        with pytest.raises(ValueError):
            read_trial(bare)
        assert read(made.question, bare) == made.trial.answer


@pytest.mark.slow
def test_the_reader_is_right_at_every_tested_spacing_and_misled_only_by_overlap():
    for name in ("flanked", "flanked-small"):
        for index, spacing in enumerate(SPACINGS):
            made = PARADIGM.draw(CONDITIONS[name], spacing, index, seed=300 + index)
            assert read(made.question, _without_chunk(made.png)) == made.trial.answer
    overlapping = [PARADIGM.draw(CONDITIONS["flanked"], 0.45, i, seed=200 + i)
                   for i in range(8)]
    right = sum(read(m.question, _without_chunk(m.png)) == m.trial.answer
                for m in overlapping)
    assert right < 8  # flankers inside the target's own ring mislead it


@pytest.mark.slow
def test_the_builtin_reader_run_has_curves_a_control_and_summaries(small_data, tmp_path):
    result = invoke("crowding", "--data", small_data, "--backend", "builtin", "--model",
                    "reader", "--out", tmp_path / "run", "--no-progress", "--no-report",
                    "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    metrics = load(tmp_path / "run")
    curves = {c["condition"]: c for c in metrics["curves"]}
    assert set(curves) == {"flanked", "flanked-small", "unflanked"}
    for c in curves.values():
        assert all(p["k"] == p["n"] for p in c["points"]), c["condition"]
    control = curves["unflanked"]
    assert (control["status"], control["unit"], control["threshold"]) == (
        "control", "px", None)
    assert [(p["level"], p["n"]) for p in control["points"]] == [(32.0, 1), (64.0, 1)]
    flanked = curves["flanked"]
    assert flanked["status"] == "not reached" and "lowest tested level" in flanked["reason"]
    summaries = {s["name"]: s for s in metrics["summaries"]}
    assert summaries["unflanked, 64 px target"]["value"] == 100.0
    spacing = summaries["critical spacing, 64 px target"]
    assert spacing["value"] is None and "lowest tested level" in spacing["reason"]
    shown = invoke("show", tmp_path / "run")
    assert "critical spacing, 64 px target" in shown.stdout
    assert "control" in shown.stdout


def _curve(name: str, levels: list[float], k: list[int], n: int, threshold: float | None,
           ci=None) -> Curve:
    points = [Point(level=x, n=n, k=c, p=c / n, ci95=wilson(c, n)) for x, c in zip(
        levels, k, strict=True)]
    return Curve(condition=name, kind="choice", unit="target diameters", n=n * len(levels),
                 n_errors=0, n_unparsed=0, points=points,
                 status="reached" if threshold else "not reached", threshold=threshold,
                 threshold_ci95=ci, reason=None if threshold else "no fit")


def test_no_critical_spacing_where_the_target_alone_was_not_legible():
    flanked = _curve("flanked", list(SPACINGS), [5, 6, 8, 10, 12, 14, 15, 15], 18, 2.0,
                     (1.6, 2.5))
    alone = _curve("unflanked", [32.0, 64.0], [5, 6], 18, None).points
    withheld = critical_spacing(flanked, 64.0, alone[1], 0.625, SIZE)
    assert withheld.value is None
    assert "6/18 right" in withheld.reason and "cannot be measured" in withheld.reason
    legible = _curve("unflanked", [32.0, 64.0], [17, 18], 18, None).points
    given = critical_spacing(flanked, 64.0, legible[1], 0.625, SIZE)
    assert given.value == 2.0 and given.ci95 == (1.6, 2.5)
    assert "128 px centre to centre" in given.note and "16.7% of the image" in given.note
    unchecked = critical_spacing(flanked, 64.0, None, 0.625, SIZE)
    assert "legibility is unchecked" in unchecked.note


def test_the_size_exponent_is_1_when_spacing_scales_with_the_target_and_0_when_fixed_in_px():
    rng = np.random.default_rng(0)
    def fitted(name: str, threshold: float, spread: float) -> Fitted:
        draws = tuple(threshold * np.exp(rng.normal(0, spread, 500)))
        return Fitted(_curve(name, list(SPACINGS), [18] * 8, 18, threshold), draws)
    same = size_exponent({64.0: fitted("flanked", 2.0, 0.05),
                          32.0: fitted("flanked-small", 2.0, 0.05)}, [32.0, 64.0])
    assert same.value == pytest.approx(1.0)
    assert same.ci95[0] < 1.0 < same.ci95[1]
    fixed = size_exponent({64.0: fitted("flanked", 1.5, 0.05),
                           32.0: fitted("flanked-small", 3.0, 0.05)}, [32.0, 64.0])
    assert fixed.value == pytest.approx(0.0, abs=1e-12)
    beyond = size_exponent({64.0: fitted("flanked", 1.5, 0.05),
                            32.0: fitted("flanked-small", 4.9, 0.5)}, [32.0, 64.0])
    assert beyond.ci95[0] is None  # draws past 5 diameters: the interval stays open
    missing = size_exponent({64.0: fitted("flanked", 1.5, 0.05)}, [32.0, 64.0])
    assert missing.value is None and "32 px" in missing.reason


def test_a_malformed_row_is_skipped_with_one_line_naming_file_and_field(serve, tmp_path):
    root = tmp_path / "data"
    write_dataset(PARADIGM, root, Design(conditions=("unflanked",), trials=2), seed=1)
    path = root / "unflanked" / "shard_00000.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[1]["answer"] = "sideways"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    server = serve(answer=answer_observer(Observer(parse_curves("crowding/unflanked=8:3:0"))))
    result = invoke("crowding", "--data", root, "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--out", tmp_path / "run",
                    "--no-progress", "--no-cache", "--no-report", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    assert len(skipped) == 1, result.stderr
    assert str(path) in skipped[0] and "field `answer`" in skipped[0]
    assert server.stats.requests == 3


def test_a_run_on_a_model_prints_within_100_columns(small_data, serve, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # far wider than visioneval draws
    curves = "crowding/flanked=2:3:0.02,crowding/flanked-small=3:3:0.02,crowding/unflanked=8:3:0"
    server = serve(answer=answer_observer(Observer(parse_curves(curves))))
    result = invoke("crowding", "--data", small_data, "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--out", tmp_path / "run",
                    "--no-cache", "--no-report", "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    lines = [*result.stdout.splitlines(), *result.stderr.splitlines()]
    assert not [ln for ln in lines if len(ln) > 100]
    assert "critical spacing, 64 px target" in result.stdout
    shown = invoke("show", tmp_path / "run")
    assert not [ln for ln in shown.stdout.splitlines() if len(ln) > 100]
    assert "People, as published" in shown.stdout


@pytest.mark.slow
def test_a_known_observers_critical_spacing_is_recovered_through_http(tmp_path):
    """20 observers (the default design's flanked curve, 144 trials each): the estimates'
    median lands within 10% of the truth and the 95% intervals hold it in most runs."""
    root = tmp_path / "data"
    write_dataset(PARADIGM, root, Design(conditions=("flanked",)), seed=0)
    curves = parse_curves("crowding/flanked=2.4:3:0.02")
    truth = criterion_level(0.625, 2.4, 3.0, 0.25, 0.02, "weibull")
    estimates, covered = [], 0
    for run in range(20):
        observer = Observer(curves, seed=run)
        with ThreadedServer(ServerScript(answer=answer_observer(observer))) as server:
            result = api.run("crowding", model="m", base_url=f"{server.base_url}/v1",
                             options={"data": str(root), "bootstrap": 200},
                             out=tmp_path / f"r{run}",
                             engine=EngineOptions(cache_path=None, concurrency=16),
                             report=False)
        curve = result.metrics["curves"][0]
        assert curve["condition"] == "flanked" and curve["n"] == 144
        if curve["threshold"] is not None:
            estimates.append(curve["threshold"])
            low, high = curve["threshold_ci95"]
            covered += (low or -math.inf) <= truth <= (high or math.inf)
    assert truth is not None and len(estimates) >= 19
    assert statistics.median(estimates) == pytest.approx(truth, rel=0.10)
    assert covered >= 15
