"""`visioneval illusions`: Müller-Lyer, Ebbinghaus and Ponzo, each against its control. The
stimuli carry their trials and are the same for the same seed; what the pixels show is what
the trial says; the builtin reader measures the shafts and circles and is not fooled; each
illusion's strength is the difference of two independently fitted PSEs with an interval from
every pair of their draws; a run recovers a known observer; a malformed row is skipped with
one line naming the file and the field; a run's terminal output fits 100 columns."""

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

from visioneval.benchmarks.illusions import ebbinghaus, mullerlyer
from visioneval.benchmarks.illusions.paradigm import Illusions
from visioneval.benchmarks.illusions.reader import read
from visioneval.loopback.observer import Observer, answer_observer, parse_curves
from visioneval.paradigms.contrasts import difference
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.metrics import Curve
from visioneval.paradigms.paradigm import Design
from visioneval.paradigms.trial import read_trial
from visioneval.stimuli.srgb import decode

PARADIGM = Illusions()
CONDITIONS = {c.name: c for c in PARADIGM.conditions()}


def darkness(png: bytes) -> np.ndarray:
    """Each pixel's darkness in linear light: 1 is the ink's full step from the paper."""
    with Image.open(io.BytesIO(png)) as image:
        luminance = decode(np.asarray(image.convert("L"), dtype=np.float64))
    return np.clip(1.0 - luminance, 0.0, None)


def line_length(dark: np.ndarray, x: float, y: float, reach: float) -> float:
    """A plain horizontal line's length: its darkness within `reach` px of (x, y) sideways
    and 4 px up and down, over its darkness per column in its middle (which holds the
    8-bit rounding its edge rows share all along)."""
    band = dark[int(y) - 4:int(y) + 5, int(x - reach):int(x + reach) + 1]
    middle = band.shape[1] // 2
    return float(band.sum()) / float(np.median(band[:, middle - 5:middle + 6].sum(axis=0)))


def test_the_design_is_six_curves_of_at_most_150_trials():
    """Nine levels of 16 trials: fewer levels of more trials keep the PSE's interval at
    its 93-94% (docs/illusions.md, "The design")."""
    assert list(CONDITIONS) == ["muller-lyer", "muller-lyer-control", "ebbinghaus",
                                "ebbinghaus-control", "ponzo", "ponzo-control"]
    for condition in CONDITIONS.values():
        assert len(condition.levels) * condition.trials <= 150
        assert 0.0 in condition.levels and min(condition.levels) == -max(condition.levels)


def test_a_stimulus_carries_its_trial_and_is_the_same_for_the_same_seed():
    condition = CONDITIONS["muller-lyer"]
    first = PARADIGM.draw(condition, 12.0, 3, 77)
    again = PARADIGM.draw(condition, 12.0, 3, 77)
    other = PARADIGM.draw(condition, 12.0, 3, 78)
    assert first.png == again.png and first.png != other.png
    carried = read_trial(first.png)
    assert carried.model_dump(exclude={"rendering"}) == first.trial.model_dump(
        exclude={"rendering"})
    assert carried.rendering and carried.rendering["mixing"] == "linear light"
    trial = first.trial
    assert trial.kind == "comparison" and trial.options == ("top", "bottom")
    assert trial.positive == trial.stimulus["comparison_side"] == trial.answer  # +12%
    assert first.question.endswith("Options: top, bottom.")


@pytest.mark.parametrize("level", [-42.0, 0.0, 30.0])
def test_the_mueller_lyer_lines_are_as_long_as_the_trial_says(level):
    for name in ("muller-lyer", "muller-lyer-control"):
        made = PARADIGM.draw(CONDITIONS[name], level, 0, 11)
        g, dark = made.trial.stimulus, darkness(made.png)
        comparison = line_length(dark, g["comparison_x"], g["comparison_y"], 140)
        assert comparison == pytest.approx(140 * (1 + level / 100), abs=0.1)
        assert g["comparison_length"] == pytest.approx(140 * (1 + level / 100))
        if name.endswith("control"):
            assert line_length(dark, g["standard_x"], g["standard_y"], 100) == \
                pytest.approx(140.0, abs=0.1)
            continue
        # the fins reach out beyond the shaft: the figure spans 140 + 2 x 35 cos 30° px
        row = dark[int(g["standard_y"]) - 20:int(g["standard_y"]) + 21].sum(axis=0)
        inked = np.flatnonzero(row > 0.5)
        assert inked[-1] - inked[0] + 1 == pytest.approx(140 + 70 * math.cos(math.pi / 6),
                                                         abs=2.5)


def test_the_ebbinghaus_circles_and_inducers_are_what_the_trial_says():
    from scipy import ndimage

    for name, inducers in (("ebbinghaus", ebbinghaus.INDUCERS), ("ebbinghaus-control", 0)):
        made = PARADIGM.draw(CONDITIONS[name], -20.0, 0, 5)
        g, dark = made.trial.stimulus, darkness(made.png)
        for role, diameter in (("standard", 44.0), ("comparison", 44.0 * 0.8)):
            x, y, r = g[f"{role}_x"], g[f"{role}_y"], diameter / 2
            rows, cols = np.indices(dark.shape) + 0.5
            near = np.hypot(cols - x, rows - y) < r + 3  # the inducers are 10 px away
            assert dark[near].sum() == pytest.approx(math.pi * r * r, rel=1e-3)
            assert g[f"{role}_diameter"] == pytest.approx(diameter)
        _, shapes = ndimage.label(dark > 0.02, structure=np.ones((3, 3)))
        assert shapes == 2 + inducers
        assert g["inducers"] == inducers


def test_the_ponzo_rails_converge_towards_the_standard_and_the_control_s_do_not():
    for seed in (1, 2, 3, 4):  # the standard above, or below
        made = PARADIGM.draw(CONDITIONS["ponzo"], 20.0, 0, seed)
        g, dark = made.trial.stimulus, darkness(made.png)
        assert g["rail_half_width_at_standard"] < g["rail_half_width_at_comparison"]
        assert line_length(dark, g["comparison_x"], g["comparison_y"], 70) == \
            pytest.approx(120.0, abs=0.1)
        for role in ("standard", "comparison"):  # the rails cross the line's row there
            row = dark[int(g[f"{role}_y"])]
            inked = np.flatnonzero(row > 0.5)
            width = inked[-1] - inked[0]
            assert width == pytest.approx(2 * g[f"rail_half_width_at_{role}"], abs=4)
        control = PARADIGM.draw(CONDITIONS["ponzo-control"], 20.0, 0, seed).trial.stimulus
        assert control["rail_half_width_at_standard"] == \
            control["rail_half_width_at_comparison"]


@pytest.mark.parametrize("name", list(CONDITIONS))
def test_the_reader_answers_right_at_the_smallest_steps(name):
    condition = CONDITIONS[name]
    step = sorted(abs(v) for v in condition.levels if v)[0]
    for seed, level in enumerate((step, -step)):
        made = PARADIGM.draw(condition, level, seed, 100 + seed)
        assert read(made.question, made.png) == made.trial.answer, (name, level)


@pytest.mark.parametrize("name", ["muller-lyer", "ebbinghaus", "ponzo"])
def test_the_reader_tells_a_tenth_of_a_percent_through_the_inducers(name):
    """0.1% is 0.14 px of the Müller-Lyer shaft: the fins' ends, 30 px beyond it, never
    enter the measure."""
    for seed, level in enumerate((0.1, -0.1)):
        made = PARADIGM.draw(CONDITIONS[name], level, seed, 200 + seed)
        assert read(made.question, made.png) == made.trial.answer, (name, level)


def test_the_reader_measures_the_shaft_whichever_way_the_fins_point(monkeypatch):
    """Fins pointing in (arrowheads) shorten the figure's extent; the reader still reads
    the shaft: a plain comparison 2% longer is longer, one 2% shorter is shorter."""

    def fins_in(picture, x, y, length):
        dx = mullerlyer.FIN * math.cos(math.radians(mullerlyer.FIN_ANGLE))
        dy = mullerlyer.FIN * math.sin(math.radians(mullerlyer.FIN_ANGLE))
        for end, inward in ((x - length / 2, 1.0), (x + length / 2, -1.0)):
            for up in (-1.0, 1.0):
                picture.line((end, y), (end + inward * dx, y + up * dy), 2.0, 0.0)

    monkeypatch.setattr(mullerlyer, "_fins_out", fins_in)
    for seed, level in enumerate((2.0, -2.0, 2.0, -2.0)):
        made = PARADIGM.draw(CONDITIONS["muller-lyer"], level, seed, 300 + seed)
        assert read(made.question, made.png) == made.trial.answer


def fitted(condition: str, pse: float | None, draws: tuple[float, ...],
           ci: tuple[float | None, float | None] | None = None, jnd: float = 4.0) -> Fitted:
    curve = Curve(condition=condition, kind="comparison", unit="%", n=150, n_errors=0,
                  n_unparsed=0, points=[], status="reached" if pse is not None else
                  "not reached", reason=None if pse is not None else "the answers do not "
                  "change with the level", pse=pse, jnd=jnd if pse is not None else None,
                  pse_ci95=ci or ((min(draws), max(draws)) if draws else None),
                  jnd_ci95=(3.0, None) if pse is not None else None)
    return Fitted(curve, draws)


def test_a_strength_pairs_every_draw_of_one_curve_with_every_draw_of_the_other():
    """Draws of the same index share their random numbers (one seed for every curve):
    paired by index they would cancel; every pair gives the two spreads together."""
    base = tuple(np.random.default_rng(1).normal(0.0, 2.0, 400))
    illusion = fitted("muller-lyer", 15.0, tuple(15.0 + v for v in base))
    control = fitted("muller-lyer-control", 0.0, base)
    found = difference("muller-lyer strength", "%", illusion, control)
    assert found.value == 15.0
    every = np.subtract.outer(illusion.draws, control.draws).ravel()
    assert found.ci95 == tuple(np.quantile(every, [0.025, 0.975], method="inverted_cdf"))
    low, high = found.ci95
    assert low is not None and high is not None
    assert high - low == pytest.approx(2 * 1.96 * 2.0 * math.sqrt(2), rel=0.1)  # not 0
    opened = difference("x", "%", fitted("a", 15.0, illusion.draws, (None, 20.0)), control)
    assert opened.ci95 is not None and opened.ci95[0] is None and opened.ci95[1] == high
    opened = difference("x", "%", illusion, fitted("b", 0.0, base, (-3.0, None)))
    assert opened.ci95 is not None and opened.ci95[0] is None and opened.ci95[1] == high


def test_a_strength_without_both_curves_says_why():
    control = fitted("ponzo-control", 0.0, (0.0, 1.0))
    missing = difference("ponzo strength", "%", None, control)
    assert missing.value is None and missing.reason == "the first curve was not run"
    flat = difference("ponzo strength", "%", fitted("ponzo", None, ()), control)
    assert flat.value is None and flat.reason is not None
    assert flat.reason.startswith("ponzo not reached: the answers do not change")


def test_the_summaries_are_each_run_illusion_s_strength_and_weber_fraction():
    curves = [fitted("muller-lyer", 18.0, (17.0, 19.0)),
              fitted("muller-lyer-control", 1.0, (0.0, 2.0), jnd=5.0),
              fitted("ponzo-control", 0.5, (0.0, 1.0), jnd=4.0)]
    found = {s.name: s for s in PARADIGM.summaries(curves)}
    assert list(found) == ["muller-lyer strength", "ponzo strength",
                           "muller-lyer Weber fraction", "ponzo Weber fraction"]
    assert found["muller-lyer strength"].value == 17.0
    assert found["muller-lyer strength"].ci95 == (15.0, 19.0)
    assert found["ponzo strength"].value is None
    assert found["ponzo strength"].reason == "the first curve was not run"
    assert found["muller-lyer Weber fraction"].value == pytest.approx(0.05)
    assert found["muller-lyer Weber fraction"].ci95 == (pytest.approx(0.03), None)
    assert found["ponzo Weber fraction"].value == pytest.approx(0.04)


def written(root: Path, conditions: tuple[str, ...], trials: int | None) -> Path:
    write_dataset(PARADIGM, root, Design(conditions=conditions, trials=trials), seed=0)
    return root


def run_args(data: Path, out: Path, *extra: object) -> list[object]:
    return ["illusions", "--data", data, "--out", out, "--no-progress", "--no-cache",
            *extra]


@pytest.mark.slow
def test_a_malformed_row_is_skipped_with_one_line_naming_file_and_field(serve, tmp_path):
    data = written(tmp_path / "data", ("ponzo-control",), 1)
    path = data / "ponzo-control" / "shard_00000.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[2]["positive"] = "left"
    rows[5]["level"] = float("nan")
    rows[8]["stimulus"] = "{not json"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    server = serve()
    result = invoke(*run_args(data, tmp_path / "run", "--backend", "openai", "--base-url",
                              server.base_url + "/v1", "--model", "m", "--no-report",
                              "--bootstrap", "20"))
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if "skipped" in ln and "row #" in ln]
    assert len(skipped) == 3, result.stderr
    for row, field in ((2, "options`/`positive"), (5, "level"), (8, "stimulus")):
        line = next(ln for ln in skipped if f"row #{row}:" in ln)
        assert str(path) in line and f"field{'s' if '/' in field else ''} `{field}`" in line
    assert server.stats.requests == 6


@pytest.fixture(scope="module")
def every_condition(tmp_path_factory) -> Path:
    """Every condition's levels, once each (54 stimuli), as `data synth-illusions` writes
    them."""
    return written(tmp_path_factory.mktemp("illusions"), (), 1)


@pytest.mark.slow
def test_the_reader_sees_no_illusion_and_its_run_and_compare_fit_100_columns(
        every_condition, tmp_path):
    result = invoke(*run_args(every_condition, tmp_path / "run", "--backend", "builtin",
                              "--model", "reader"))
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 100, result.stdout
    assert "muller-lyer strength" in result.stdout
    metrics = load(tmp_path / "run")
    assert metrics["n"] == 54 and metrics["n_unparsed"] == 0
    steps = {name: min(abs(v) for v in c.levels if v) for name, c in CONDITIONS.items()}
    for curve in metrics["curves"]:  # a step at 0: the PSE within one step, the JND tiny
        step = steps[curve["condition"]]
        assert abs(curve["pse"]) < step and curve["jnd"] <= step, curve
    strengths = [s for s in metrics["summaries"] if s["name"].endswith("strength")]
    assert len(strengths) == 3
    for summary in strengths:  # one trial at 0, where the reader guesses
        low, high = summary["ci95"]
        step = steps[summary["name"].removesuffix(" strength")]  # the control's the same
        assert abs(summary["value"]) <= step + 1e-6 and low <= 0.0 <= high, summary
    guessed = invoke(*run_args(every_condition, tmp_path / "random", "--backend", "builtin",
                               "--model", "random", "--no-report"))
    assert guessed.exit_code == 0, guessed.output
    compared = invoke("compare", tmp_path / "run", tmp_path / "random")
    assert compared.exit_code == 0, compared.output
    assert max(len(line) for line in compared.stdout.splitlines()) <= 100, compared.stdout
    text = " ".join(compared.stdout.split())
    assert "muller-lyer strength (% of standard):" in text
    for summary in load(tmp_path / "random")["summaries"][:3]:  # random answers: mostly flat
        value = summary["value"]
        shown = "not computed" if value is None else f"{value:.3g}"
        assert f"{summary['name']} (% of standard): {shown}" in text


@pytest.mark.slow
def test_runs_on_a_known_observer_recover_its_illusion(serve, tmp_path):
    """Five runs of the default design, the observer drawing its answers anew each time:
    the means land within three of their standard errors of the truth and most intervals
    hold it (recovery over 200 runs: docs/illusions.md)."""
    data = written(tmp_path / "data", ("muller-lyer", "muller-lyer-control"), None)
    curves = parse_curves("illusions/muller-lyer=20:8:0.02,"
                          "illusions/muller-lyer-control=0:8:0.02")
    found: dict[str, list[float]] = {"pse": [], "control": [], "jnd": [], "strength": []}
    covered = 0
    for seed in range(5):
        server = serve(answer=answer_observer(Observer(curves, seed=seed)))
        out = tmp_path / f"run{seed}"
        result = invoke(*run_args(data, out, "--backend", "openai", "--base-url",
                                  server.base_url + "/v1", "--model", "m", "--no-report"))
        assert result.exit_code == 0, result.output
        metrics = json.loads((out / "metrics.json").read_text())
        by_name = {c["condition"]: c for c in metrics["curves"]}
        found["pse"].append(by_name["muller-lyer"]["pse"])
        found["jnd"].append(by_name["muller-lyer"]["jnd"])
        found["control"].append(by_name["muller-lyer-control"]["pse"])
        strength = metrics["summaries"][0]
        assert strength["name"] == "muller-lyer strength"
        assert metrics["summaries"][1]["name"] == "muller-lyer Weber fraction"
        found["strength"].append(strength["value"])
        covered += strength["ci95"][0] <= 20.0 <= strength["ci95"][1]
    mean = {name: sum(values) / len(values) for name, values in found.items()}
    assert abs(mean["pse"] - 20.0) < 3.5 and abs(mean["control"]) < 3.5, found
    assert abs(mean["strength"] - 20.0) < 4.5 and covered >= 3, found
    assert mean["jnd"] == pytest.approx(8.0, rel=0.3), found
