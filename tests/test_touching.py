"""Touching circles as a threshold (`visioneval touching`): each stimulus carries its trial
and is the same bytes for the same seed; its geometry, measured from the pixels, is what
the trial says (centres, diameters, the gap to a few hundredths of a pixel, no light where
a pair touches); the builtin pixel reader is right at every tested gap; a known observer's
threshold is recovered through the loopback server; a malformed row is skipped with one
line naming its file and field; and the terminal output fits 100 columns."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke
from PIL import Image

from visioneval.benchmarks.touching.paradigm import (
    GAPS,
    QUESTION,
    SIZE_RATIO,
    Touching,
    ratio_interval,
)
from visioneval.benchmarks.touching.reader import light_at_centre, read
from visioneval.loopback.observer import Observer, answer_observer, parse_curves
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.headline import headline
from visioneval.paradigms.paradigm import Design
from visioneval.paradigms.trial import read_trial
from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stats.psychometric_fit import (
    bridged_interval,
    threshold_draws,
    threshold_interval,
)
from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.srgb import decode

PARADIGM = Touching()
CONDITIONS = {c.name: c for c in PARADIGM.conditions()}


def ink(png: bytes) -> np.ndarray:
    """Each pixel's share of ink in linear light (0 white, 1 black)."""
    codes = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)
    return np.clip(1.0 - decode(codes), 0.0, 1.0)


def pair(share: np.ndarray, x: float, y: float, angle: float
         ) -> tuple[float, tuple[float, float], float]:
    """A pair's ink area, its centroid, and the distance between its circles' centres from
    the ink's second moment along the pair's line: two equal circles of radius r with
    centres ±c from the middle have a mean square of r²/4 + c² along it (each pixel's own
    width adds 1/12 px², Sheppard's correction)."""
    rows, cols = np.mgrid[0:share.shape[0], 0:share.shape[1]] + 0.5
    w = share * (np.hypot(cols - x, rows - y) < 70)
    area = float(w.sum())
    cx, cy = float((w * cols).sum() / area), float((w * rows).sum() / area)
    u = (math.cos(math.radians(angle)), math.sin(math.radians(angle)))
    along = (cols - cx) * u[0] + (rows - cy) * u[1]
    radius_squared = area / (2 * math.pi)
    c = math.sqrt(float((w * along ** 2).sum()) / area + 1 / 12 - radius_squared / 4)
    return area, (cx, cy), 2 * c


def test_a_stimulus_carries_its_trial_and_the_same_seed_gives_the_same_bytes():
    made = PARADIGM.draw(CONDITIONS["diagonal"], 2.0, 0, 77)
    again = PARADIGM.draw(CONDITIONS["diagonal"], 2.0, 0, 77)
    other = PARADIGM.draw(CONDITIONS["diagonal"], 2.0, 0, 78)
    assert made.png == again.png and made.png != other.png
    trial = read_trial(made.png)
    assert trial.model_dump(exclude={"rendering"}) == made.trial.model_dump(
        exclude={"rendering"})
    assert trial.rendering and trial.rendering["mixing"] == "linear light"
    assert (trial.kind, trial.options, trial.level) == ("choice", ("left", "right"), 2.0)
    assert trial.answer == trial.stimulus["gapped_side"] and trial.chance == 0.5
    assert trial.stimulus["gap_of_width"] == pytest.approx(2.0 / 512)
    assert made.question == QUESTION and QUESTION.endswith("Options: left, right.")


@pytest.mark.parametrize("condition", ["horizontal", "vertical", "diagonal",
                                       "horizontal-small"])
@pytest.mark.parametrize("gap", [0.25, 1.0, 4.0])
def test_the_pixels_hold_the_geometry_the_trial_states(condition, gap):
    made = PARADIGM.draw(CONDITIONS[condition], gap, 0, 1000 + int(gap * 8))
    g = made.trial.stimulus
    share = ink(made.png)
    for side in ("left", "right"):
        x, y, size = (float(g[f"{side}_{k}"]) for k in ("x", "y", "diameter"))
        area, centre, between = pair(share, x, y, float(g["angle_deg"]))
        assert 2 * math.pi * (size / 2) ** 2 == pytest.approx(area, rel=1e-3)
        assert centre == pytest.approx((x, y), abs=0.01)
        assert between - size == pytest.approx(float(g[f"{side}_gap"]), abs=0.02)
        assert abs(size / float(g["diameter"]) - 1) <= 0.08
    assert float(g[f"{made.trial.answer}_gap"]) == gap
    assert float(g[f"{'left' if made.trial.answer == 'right' else 'right'}_gap"]) == 0.0


def exact_light(gap: float, angle: float, cx: float, cy: float, radius: float) -> float:
    """The light of `light_at_centre`'s window by brute force: 64 x 64 point samples per
    pixel of two circles `gap` px apart about (cx, cy)."""
    u = (math.cos(angle), math.sin(angle))
    reach = radius + gap / 2
    offsets = (np.arange(64) + 0.5) / 64
    total = 0.0
    for row in range(int(cy) - 7, int(cy) + 8):
        for col in range(int(cx) - 7, int(cx) + 8):
            xs, ys = col + offsets[None, :], row + offsets[:, None]
            inside = ((np.hypot(xs - cx + reach * u[0], ys - cy + reach * u[1]) < radius) |
                      (np.hypot(xs - cx - reach * u[0], ys - cy - reach * u[1]) < radius))
            weight = math.exp(-((col + 0.5 - cx) ** 2 + (row + 0.5 - cy) ** 2) / 4.5)
            total += weight * (1 - inside.mean())
    return total


@pytest.mark.parametrize("angle", [0.0, math.pi / 4])
def test_touching_circles_drawn_together_let_through_only_the_light_between_them(angle):
    """`Canvas.discs` adds the circles' shares: the light where a touching pair meets, and
    where a 0.125 px gap separates it, is the exact area's to 0.02 (of 0.36 and 0.83);
    two `disc`s drawn one over the other let light through where they touch."""
    cx, cy, radius = 60.3, 40.7, 24.0
    for gap in (0.0, 0.125):
        canvas = Canvas(120, 80, 1.0)
        reach = radius + gap / 2
        canvas.discs([(cx - reach * math.cos(angle), cy - reach * math.sin(angle)),
                      (cx + reach * math.cos(angle), cy + reach * math.sin(angle))],
                     radius, 0.0)
        measured = _window(1.0 - canvas.luminance, cx, cy)
        assert measured == pytest.approx(exact_light(gap, angle, cx, cy, radius), abs=0.02)
    over = Canvas(120, 80, 1.0)
    for sign in (-1, 1):
        over.disc((cx + sign * radius * math.cos(angle), cy + sign * radius * math.sin(angle)),
                  radius, 0.0)
    assert _window(1.0 - over.luminance, cx, cy) > exact_light(0.0, angle, cx, cy,
                                                               radius) + 0.3


def _window(share: np.ndarray, cx: float, cy: float) -> float:
    rows, cols = np.mgrid[0:share.shape[0], 0:share.shape[1]] + 0.5
    weight = np.exp(-((cols - cx) ** 2 + (rows - cy) ** 2) / 4.5)
    return float((weight * (1.0 - share)).sum())


def test_the_reader_reads_the_pixels_not_the_chunk():
    made = PARADIGM.draw(CONDITIONS["vertical"], 0.5, 0, 5)
    stripped = io.BytesIO()
    Image.open(io.BytesIO(made.png)).save(stripped, format="PNG")  # no text chunk
    assert read("", stripped.getvalue()) == made.trial.answer
    gapped = made.trial.answer
    share = ink(made.png)
    half = share[:, :256] if gapped == "left" else share[:, 256:]
    other = share[:, 256:] if gapped == "left" else share[:, :256]
    assert light_at_centre(half) > light_at_centre(other) + 1.0  # 0.5 px x 1.5 px x √(2π)


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_the_reader_is_right_at_the_smallest_gaps(condition):
    for seed in range(3):
        for gap in GAPS[:1]:
            made = PARADIGM.draw(CONDITIONS[condition], gap, 0, seed)
            assert read("", made.png) == made.trial.answer, (condition, gap, seed)


@pytest.mark.slow
def test_the_reader_is_right_at_every_gap_through_the_command(tmp_path):
    data = tmp_path / "data"
    made = invoke("data", "synth-touching", "--out", data, "--n", "2")
    assert made.exit_code == 0, made.output
    result = invoke("touching", "--data", data, "--backend", "builtin", "--model", "reader",
                    "--out", tmp_path / "run", "--no-progress", "--no-report",
                    "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert [c["condition"] for c in metrics["curves"]] == list(CONDITIONS)
    for curve in metrics["curves"]:
        assert [p["level"] for p in curve["points"]] == list(GAPS)
        assert all(p["k"] == p["n"] == 2 for p in curve["points"]), curve["condition"]
        assert curve["threshold"] is None and "lowest tested level" in curve["reason"]
    assert all(len(line) <= 100 for line in result.output.splitlines()), result.output
    assert "People, as published" not in result.output  # the full tables: `show`
    shown = invoke("show", tmp_path / "run")
    assert "Landolt" in shown.output and "ISO 8596" in shown.output
    assert all(len(line) <= 100 for line in shown.output.splitlines()), shown.output


def test_a_curve_figure_stays_the_headline_beside_the_size_ratio():
    metrics = {"kind": "choice", "curves": [
        {"condition": "horizontal", "threshold": 1.3, "threshold_ci95": [1.0, 1.7],
         "unit": "px", "n": 144},
        {"condition": "horizontal-small", "threshold": 0.6, "unit": "px", "n": 144}],
        "summaries": [{"name": SIZE_RATIO, "unit": "x", "value": 2.1, "headline": False}]}
    found = headline(metrics)
    assert found.label == "horizontal threshold; +2 more" and found.value == 1.3


def test_the_size_ratio_interval_pairs_independent_draws():
    """Two curves resampled from the same random numbers move together; the summary pairs
    them at random, so equal curves give an interval about 1 as wide as independent
    draws would, not a point."""
    rng = np.random.default_rng(3)
    same = np.exp(rng.normal(0.0, 0.2, 1000))
    low, high = ratio_interval(same, same)
    assert low is not None and high is not None
    assert low < 0.7 < 1.0 < 1.4 < high
    with_inf = np.append(same[:-1], math.inf)
    assert ratio_interval(same, with_inf) is not None


def test_the_bridged_interval_holds_the_percentile_one_and_reaches_further():
    """Bridging keeps the fit's own draws and widens their interval with the bootstraps of
    two curves near the fit: it never lies inside the plain one, and here it is wider."""
    rng = np.random.default_rng(8)
    k = [int(rng.binomial(18, psi(x, 1.5, 2.0, 0.5, 0.02))) for x in GAPS]
    draws, widened = bridged_interval(GAPS, k, [18] * len(GAPS), 0.5, resamples=100)
    plain = threshold_draws(GAPS, k, [18] * len(GAPS), 0.5, resamples=100)
    assert np.array_equal(draws.thresholds, plain.thresholds)
    low, high = threshold_interval(plain.thresholds, GAPS[0], GAPS[-1])
    assert widened is not None
    assert widened[0] <= low and widened[1] >= high and widened != (low, high)
    flat = bridged_interval(GAPS, [9] * len(GAPS), [18] * len(GAPS), 0.5, resamples=50)
    assert flat[1] is None and flat[0].fit.threshold is None


@pytest.mark.slow
def test_a_known_observer_threshold_is_recovered_through_the_loopback(serve, tmp_path):
    """Three observers with one threshold answer 480 trials each (8 gaps x 60, one layout):
    their median fitted threshold lies within 10% of the truth and at least two of the
    three 95% intervals hold it (each misses one run in twenty)."""
    from visioneval import api
    from visioneval.engine.options import EngineOptions

    data = tmp_path / "data"
    write_dataset(PARADIGM, data, Design(conditions=("horizontal",), trials=60), seed=4)
    truth = criterion_level(0.75, 1.5, 2.0, 0.5, 0.02, "weibull")
    assert truth is not None
    found, covered = [], 0
    for seed in (1, 2, 3):
        observer = Observer(parse_curves("touching=1.5:2:0.02"), seed=seed)
        server = serve(answer=answer_observer(observer))
        result = api.run("touching", model="m", base_url=f"{server.base_url}/v1",
                         options={"data": str(data)}, out=tmp_path / f"run{seed}",
                         engine=EngineOptions(cache_path=None, concurrency=16), report=False)
        curve = result.metrics["curves"][0]
        assert curve["n"] == 480 and curve["threshold"] is not None and curve["bridged"]
        found.append(curve["threshold"])
        low, high = curve["threshold_ci95"]
        covered += low <= truth <= high
        scaled = {s["unit"]: s["value"] for s in curve["scaled"]}
        assert scaled["% of circle diameter"] == pytest.approx(100 * curve["threshold"] / 48)
    assert float(np.median(found)) == pytest.approx(truth, rel=0.10), found
    assert covered >= 2


def damage(root: Path, condition: str, changes: dict[int, dict[str, object]]) -> Path:
    path = root / condition / "shard_00000.parquet"
    rows = pq.read_table(path).to_pylist()
    for index, fields in changes.items():
        rows[index].update(fields)
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    return path


def test_a_malformed_row_is_skipped_with_one_line_naming_file_and_field(serve, tmp_path):
    data = tmp_path / "data"
    write_dataset(PARADIGM, data, Design(conditions=("vertical",), trials=1), seed=2)
    path = damage(data, "vertical", {1: {"answer": "middle"}, 4: {"level": float("nan")}})
    server = serve(answer=answer_observer(Observer(parse_curves("touching=1:2:0.02"))))
    result = invoke("touching", "--data", data, "--backend", "openai", "--base-url",
                    f"{server.base_url}/v1", "--model", "m", "--out", tmp_path / "run",
                    "--no-progress", "--no-report", "--no-cache", "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if str(path) in ln]
    assert len(skipped) == 2, result.stderr
    assert any("field `answer`" in ln for ln in skipped)
    assert any("field `level`" in ln for ln in skipped)
    assert server.stats.requests == 6  # the eight rows but the two skipped
