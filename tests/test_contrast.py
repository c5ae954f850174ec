"""Contrast detection (`visioneval contrast`): each stimulus carries its trial and is the same
for the same seed; the patch is where, at the frequency and at the contrast the trial says,
measured from the pixels; the blank half differs from the patch's only by the grating
(both dithered alike); the builtin reader finds the patch well above its threshold; the
contrast sensitivity function recovers a known log-parabola, and a known observer's
thresholds and CSF come back through the loopback server; a malformed row is skipped with
one line; a run's terminal output fits 100 columns."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke, load
from PIL import Image

from visioneval.benchmarks.contrast import csf
from visioneval.benchmarks.contrast.paradigm import (
    BACKGROUND,
    CONTRASTS,
    FREQUENCIES,
    HALF,
    HEIGHT,
    STEP,
    WIDTH,
    ContrastDetection,
    name_of,
)
from visioneval.loopback.observer import Curve, Observer, answer_observer
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.fits import Cell, Fitted, Tally, fit_curves
from visioneval.paradigms.paradigm import Design
from visioneval.paradigms.trial import read_trial
from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stimuli.srgb import decode

PARADIGM = ContrastDetection()
CONDITIONS = {c.name: c for c in PARADIGM.conditions()}
TRUTH = csf.LogParabola(40.0, 24.0, 3.0)  # the recovery's CSF (docs/contrast.md)


def luminance(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return decode(np.asarray(image, dtype=np.float64))


def test_the_stimulus_carries_its_trial_and_is_the_same_for_the_same_seed():
    first = PARADIGM.draw(CONDITIONS["f32"], 3.125, 1, seed=7)
    again = PARADIGM.draw(CONDITIONS["f32"], 3.125, 1, seed=7)
    other = PARADIGM.draw(CONDITIONS["f32"], 3.125, 1, seed=8)
    assert first.png == again.png and first.png != other.png
    trial = read_trial(first.png)
    assert trial == first.trial
    assert (trial.paradigm, trial.condition, trial.kind, trial.level) == (
        "contrast", "f32", "choice", 3.125)
    assert trial.options == ("left", "right") and trial.answer == "right"
    assert trial.chance == 0.5 and trial.rendering and trial.rendering["dithered"]
    assert "Options: left, right." in first.question
    with Image.open(io.BytesIO(first.png)) as image:
        assert image.size == (WIDTH, HEIGHT) == (trial.width, trial.height)


def test_each_levels_trials_alternate_sides():
    sides = [PARADIGM.draw(CONDITIONS["f8"], 50.0, i, seed=i).trial.answer for i in range(4)]
    assert sides == ["left", "right"] * 2


@pytest.mark.parametrize("cycles", FREQUENCIES)
def test_the_patch_is_where_and_at_the_frequency_the_trial_says(cycles):
    """At 50% contrast: the brighter-and-darker half is the trial's side, its power peaks at
    the trial's cycles (per half: half the image's), its centre of contrast energy is the
    trial's centre, and the contrast the codes hold is the one asked for."""
    made = PARADIGM.draw(CONDITIONS[name_of(cycles)], 50.0, 0, seed=11)
    geometry = made.trial.stimulus
    light = luminance(made.png)
    side = geometry["side"]
    patch = light[:, :HALF] if side == "left" else light[:, HALF:]
    blank = light[:, HALF:] if side == "left" else light[:, :HALF]
    assert patch.std() > 4 * blank.std()
    profile = (patch - patch.mean()).sum(axis=0)
    spectrum = np.abs(np.fft.rfft(profile))
    assert int(np.argmax(spectrum[1:])) + 1 == pytest.approx(cycles * HALF / WIDTH, abs=1)
    energy = ((light - light.mean()) ** 2).sum(axis=0)
    noise = float(np.median(energy[HALF:] if side == "left" else energy[:HALF]))
    weights = np.clip(energy - noise, 0.0, None)  # the dither's own energy is everywhere
    centre = float((weights * (np.arange(WIDTH) + 0.5)).sum() / weights.sum())
    assert centre == pytest.approx(geometry["centre_x"], abs=2.0)
    assert geometry["centre_x_share"] == pytest.approx(geometry["centre_x"] / WIDTH)
    assert geometry["cycles_per_px"] == pytest.approx(cycles / WIDTH) and cycles / WIDTH <= 0.25
    assert geometry["contrast_shown"] == pytest.approx(0.5, rel=0.02)


def test_below_one_code_step_both_halves_hold_the_same_two_codes():
    """At 0.63% (under two fifths of the 1.69% step) every pixel of both halves is code 128
    or 129 at the same rate: only the grating's arrangement tells the patch apart, and on
    average the codes still hold its contrast."""
    assert CONTRASTS[0] / 100 < STEP and CONTRASTS[-1] == 100
    made = PARADIGM.draw(CONDITIONS["f32"], CONTRASTS[0], 0, seed=3)
    with Image.open(io.BytesIO(made.png)) as image:
        codes = np.asarray(image)
    assert set(np.unique(codes)) == {128, 129}
    left, right = (codes[:, :HALF] == 129).mean(), (codes[:, HALF:] == 129).mean()
    assert left == pytest.approx(right, abs=0.01) and left == pytest.approx(0.5, abs=0.01)
    assert float(decode(codes).mean()) == pytest.approx(BACKGROUND, rel=1e-3)
    assert made.trial.stimulus["below_one_code_step"] is True
    shown = [PARADIGM.draw(CONDITIONS["f32"], CONTRASTS[0], i, seed=i).trial.stimulus[
        "contrast_shown"] for i in range(12)]
    assert float(np.mean(shown)) == pytest.approx(CONTRASTS[0] / 100, rel=0.25)


def test_the_reader_finds_the_patch_at_every_tested_contrast():
    """The pixel reader's own threshold is about 0.1% (docs/contrast.md): at the lowest
    tested contrast, 0.63%, it is right, at every frequency."""
    for name in CONDITIONS:
        for i in range(2):  # one on each side
            made = PARADIGM.draw(CONDITIONS[name], CONTRASTS[0], i, seed=100 + i)
            assert PARADIGM.reader("", made.png) == made.trial.answer, (name, i)


def test_the_log_parabola_comes_back_from_its_own_thresholds():
    frequencies = list(FREQUENCIES)
    thresholds = [TRUTH.threshold(f) for f in frequencies]
    found = csf.fit(frequencies, thresholds, [np.array([t] * 40) for t in thresholds])
    assert found.curve is not None
    assert found.curve.peak_sensitivity == pytest.approx(40.0)
    assert found.curve.peak_frequency == pytest.approx(24.0)
    assert found.curve.bandwidth == pytest.approx(3.0)
    assert TRUTH.sensitivity(24.0 * 2 ** 1.5) == pytest.approx(20.0)  # half at B/2 octaves
    assert found.refits.shape == (40, 3) and found.failed == 0
    rising = csf.fit([8, 16, 32], [0.2, 0.1, 0.05], [np.array([0.1] * 40)] * 3)
    assert rising.curve is None  # a straight line in log-log: no peak


def _fitted(thresholds: dict[int, float], trials: int, seed: int) -> list[Fitted]:
    """Each frequency's curve fitted from binomial counts of an observer whose 75% point
    is the given contrast (%), as the benchmark fits them."""
    rng = np.random.default_rng(seed)
    tallies = {}
    for cycles, threshold in thresholds.items():
        alpha = threshold / criterion_level(0.75, 1.0, 3.0, 0.5, 0.02)
        tally = Tally()
        for level in CONTRASTS:
            p = psi(level, alpha, 3.0, 0.5, 0.02)
            tally.cells[level] = Cell(n=trials, k=int(rng.binomial(trials, p)))
        tallies[name_of(cycles)] = tally
    return fit_curves(PARADIGM, tallies, 100, seed)


def test_the_summaries_give_the_csf_with_intervals_and_each_sensitivity():
    found = _fitted({f: 100 * TRUTH.threshold(f) for f in FREQUENCIES}, 200, 1)
    summaries = {s.name: s for s in PARADIGM.summaries(found)}
    peak = summaries["CSF peak sensitivity"]
    assert peak.value == pytest.approx(40.0, rel=0.15) and peak.unit == "1/contrast"
    assert peak.ci95 and peak.ci95[0] < peak.value < peak.ci95[1]
    assert summaries["CSF peak frequency"].value == pytest.approx(24.0, rel=0.2)
    assert summaries["CSF bandwidth"].value == pytest.approx(3.0, rel=0.2)
    assert "log10(2)" in peak.note
    at32 = summaries["sensitivity at 32 cycles/image"]
    assert at32.value == pytest.approx(TRUTH.sensitivity(32), rel=0.15)


def test_each_curves_bootstrap_has_its_own_random_numbers():
    """Two curves of the same counts get different draws (their seeds differ by name), so
    a CSF refitted row by row pairs independent draws; the same curve gets the same."""
    counts = {32: 3.0, 64: 3.0}
    first, second = _fitted(counts, 24, 4)
    assert first.curve.threshold == pytest.approx(second.curve.threshold, rel=0.5)
    a, b = np.log(first.draws[:90]), np.log(second.draws[:90])
    finite = np.isfinite(a) & np.isfinite(b)
    paired = np.corrcoef(a[finite], b[finite])[0, 1]
    assert abs(paired) < 0.3
    again = _fitted(counts, 24, 4)[0]
    assert again.draws == first.draws


def test_the_csf_is_absent_with_its_reason_when_too_few_frequencies_reach_a_threshold():
    found = _fitted({16: 3.0, 32: 2.5, 64: 300.0, 128: 300.0}, 16, 2)
    summaries = {s.name: s for s in PARADIGM.summaries(found)}
    assert summaries["CSF peak sensitivity"].value is None
    assert "needs 3" in str(summaries["CSF peak sensitivity"].reason)
    assert summaries["sensitivity at 128 cycles/image"].value is None


def test_a_peak_outside_the_tested_frequencies_is_not_measured():
    rising = {f: 100 * 0.5 * (8 / f) for f in FREQUENCIES}  # sensitivity grows with f
    found = _fitted(rising, 400, 3)
    summaries = {s.name: s for s in PARADIGM.summaries(found)}
    reason = str(summaries["CSF peak frequency"].reason)
    assert summaries["CSF peak frequency"].value is None
    assert "tested frequency" in reason or "no maximum" in reason


def _one_frequency(root: Path, trials: int = 1) -> Path:
    write_dataset(PARADIGM, root, Design(conditions=("f32",), trials=trials), seed=0)
    return root / "f32" / "shard_00000.parquet"


@pytest.mark.slow
def test_a_malformed_row_is_skipped_with_one_line_naming_file_and_field(tmp_path):
    path = _one_frequency(tmp_path / "data")
    rows = pq.read_table(path).to_pylist()
    rows[2]["level"] = float("nan")
    rows[4]["answer"] = "middle"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    result = invoke("contrast", "--data", tmp_path / "data", "--backend", "builtin",
                    "--model", "reader", "--out", tmp_path / "run", "--no-progress",
                    "--no-report", "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if str(path) in ln]
    assert any("field `level`" in ln for ln in skipped), result.stderr
    assert any("field `answer`" in ln for ln in skipped), result.stderr
    assert load(tmp_path / "run")["n"] == len(rows) - 2


@pytest.mark.slow
def test_a_run_with_the_reader_fits_100_columns_and_shows_the_csf(tmp_path):
    """Three frequencies, two trials a level, through `visioneval contrast` with the pixel
    reader: right at every level (so no threshold: each is below the lowest tested), every
    printed line within 100 columns, and the report's CSF section absent without points."""
    write_dataset(PARADIGM, tmp_path / "data", Design(conditions=("f8", "f32", "f128"),
                                                      trials=2), seed=0)
    result = invoke("contrast", "--data", tmp_path / "data", "--backend", "builtin",
                    "--model", "reader", "--out", tmp_path / "run", "--no-progress",
                    "--bootstrap", "50")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 100
    metrics = load(tmp_path / "run")
    assert all(p["k"] == p["n"] for c in metrics["curves"] for p in c["points"])
    assert all("lowest tested level" in c["reason"] for c in metrics["curves"])
    assert "needs 3" in metrics["summaries"][0]["reason"]
    assert (tmp_path / "run" / "report.html").exists()


@pytest.mark.slow
def test_a_known_observer_comes_back_through_the_loopback_server(serve, tmp_path):
    """One run, three frequencies of 24 trials a level, the loopback observer answering
    from a known CSF's thresholds: each threshold within its interval or 25% of the truth,
    and the CSF through the three near the truth's peak."""
    frequencies = (16, 32, 64)
    write_dataset(PARADIGM, tmp_path / "data",
                  Design(conditions=tuple(name_of(f) for f in frequencies), trials=24),
                  seed=0)
    curves = {f"contrast/{name_of(f)}": Curve(
        100 * TRUTH.threshold(f) / criterion_level(0.75, 1.0, 3.0, 0.5, 0.02), 3.0, 0.02)
        for f in frequencies}
    server = serve(answer=answer_observer(Observer(curves, seed=5)))
    result = invoke("contrast", "--data", tmp_path / "data", "--backend", "openai",
                    "--base-url", server.base_url + "/v1", "--model", "m", "--out",
                    tmp_path / "run", "--no-progress", "--no-report", "--no-cache")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 100
    metrics = load(tmp_path / "run")
    for c in metrics["curves"]:
        truth = 100 * TRUTH.threshold(float(c["condition"][1:]))
        low, high = c["threshold_ci95"]
        assert c["threshold"] == pytest.approx(truth, rel=0.25), c
        assert (low or 0) < c["threshold"] < (high or math.inf)
    assert metrics["dispersion_model"] == "fitted"
    shown = invoke("show", tmp_path / "run")
    assert "as dispersed as the fit's lack of fit says" in " ".join(shown.stdout.split())
    summaries = {s["name"]: s for s in metrics["summaries"]}
    assert summaries["CSF peak frequency"]["value"] == pytest.approx(24.0, rel=0.35)
    assert summaries["CSF peak sensitivity"]["value"] == pytest.approx(40.0, rel=0.3)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["benchmark"] == "contrast"
