"""Graphical perception (`visioneval graphical`): the charts carry their trials and draw
what they say, the pixel reader measures them, estimates are read strictly and scored by
Cleveland & McGill's midmean log2 error, the encodings are ranked beside people's order,
and a known observer's error is recovered through the loopback server."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke

from visioneval.benchmarks.graphical import charts
from visioneval.benchmarks.graphical.paradigm import ENCODINGS, LEVELS, Graphical
from visioneval.benchmarks.graphical.reader import measure, read
from visioneval.loopback.observer import (
    Curve,
    Observer,
    answer_observer,
    estimate_answer,
    estimate_distribution,
)
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.metrics import Curve as FittedCurve
from visioneval.paradigms.paradigm import Design
from visioneval.paradigms.ranking import agreement, ranked
from visioneval.paradigms.trial import read_trial, stimulus_seed
from visioneval.stats.midmean import (
    log2_error,
    midmean,
    midmean_draws,
    percentile_interval,
    weighted_midmean,
)

PARADIGM = Graphical()
CONDITIONS = {c.name: c for c in PARADIGM.conditions()}
TOLERANCE = {"px": 0.05, "deg": 0.3, "px2": 0.5, "darkness": 0.002}


def _drawn(name: str, level: float, index: int = 0):
    position = list(CONDITIONS).index(name)
    return PARADIGM.draw(CONDITIONS[name], level, index,
                         stimulus_seed(0, position, LEVELS.index(level), index))


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """Two encodings, one trial a level (24 stimuli), written by the real synth."""
    root = tmp_path_factory.mktemp("graphical")
    write_dataset(PARADIGM, root, Design(conditions=("position-common", "area"), trials=1))
    return root


def _run(server, data: Path, out: Path, *extra: str):
    result = invoke("graphical", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data", data, "--out", out, "--no-progress",
                    "--no-cache", "--bootstrap", "200", *extra)
    assert result.exit_code == 0, result.output
    return result, json.loads((out / "metrics.json").read_text())


@pytest.mark.parametrize("name", list(CONDITIONS))
def test_a_chart_carries_its_trial_and_the_same_seed_draws_the_same_bytes(name):
    made = _drawn(name, 33.0)
    assert read_trial(made.png).model_dump(exclude={"rendering"}) == \
        made.trial.model_dump(exclude={"rendering"})
    assert made.trial.kind == "estimate" and made.trial.options == ("0", "100")
    assert made.trial.answer == "33" and made.trial.level == 33.0
    assert _drawn(name, 33.0).png == made.png
    assert _drawn(name, 33.0, index=1).png != made.png
    geometry = made.trial.stimulus
    assert geometry["smaller_value"] / geometry["larger_value"] == pytest.approx(0.33)
    assert "Answer with a number from 0 to 100." in made.question


@pytest.mark.parametrize("name", list(CONDITIONS))
def test_the_marked_elements_measured_from_the_pixels_are_what_the_trial_says(name):
    for level, index in ((12.0, 0), (54.0, 1), (89.0, 2)):
        made = _drawn(name, level, index)
        geometry = made.trial.stimulus
        found = measure(made.question, made.png)
        assert found is not None
        truth = sorted([float(geometry["larger_value"]),
                        float(geometry["smaller_value"])])
        tolerance = TOLERANCE[str(geometry["value_unit"])]
        assert sorted(found) == pytest.approx(truth, abs=tolerance), (level, index)
        assert read(made.question, made.png) == f"{level:g}"


def test_the_two_marked_elements_are_the_dotted_ones_and_the_larger_varies_in_place():
    firsts = set()
    for index in range(12):
        geometry = _drawn("position-common", 40.0, index).trial.stimulus
        firsts.add(geometry["larger_dot_x"] < geometry["smaller_dot_x"])
        assert geometry["larger_dot_y"] == geometry["smaller_dot_y"] == 276 + 2 + charts.BELOW
    assert firsts == {True, False}


def test_shading_uses_cie_lightness_both_ways():
    for darkness in (0.0, 0.05, 0.5, 0.8, 0.99):
        assert charts.darkness_of_luminance(charts.luminance_of_darkness(darkness)) == \
            pytest.approx(darkness, abs=1e-12)
    assert charts.luminance_of_darkness(0.5) == pytest.approx(0.18419, abs=1e-4)  # L* 50


def test_the_midmean_is_the_mean_of_the_middle_half_with_straddling_values_in_part():
    assert midmean([1, 2, 3, 4]) == pytest.approx(2.5)
    assert midmean([1, 2, 3]) == pytest.approx((1 / 12 + 2 / 3 + 3 / 12) / 0.5)
    assert midmean([5]) == 5 and midmean([]) is None
    assert midmean([-3, -3, -3, 100, 100, 0, 0, 0]) == pytest.approx(-0.75)
    assert weighted_midmean([4, 1, 3, 2], [1, 1, 1, 1]) == pytest.approx(2.5)
    assert weighted_midmean([1, 2, 3], [0.25, 0.5, 0.25]) == pytest.approx(2.0)
    assert log2_error(40, 40) == -3 and log2_error(41.875, 40) == pytest.approx(1.0)


def test_the_bootstrap_does_not_depend_on_the_order_of_the_trials():
    rng = random.Random(4)
    values = [rng.gauss(1.0, 1.0) for _ in range(150)]
    draws = midmean_draws(values, 500, (0, 7))
    assert (draws == midmean_draws(sorted(values, reverse=True), 500, (0, 7))).all()
    low, high = percentile_interval(draws) or (0, 0)
    assert low < midmean(values) < high  # type: ignore[operator]
    assert midmean_draws(values, 0, 1).size == 0 and percentile_interval(draws[:0]) is None


def test_the_observers_estimates_follow_its_exact_distribution():
    curve = Curve(-2.0, 6.0, 0.1)
    answers, probabilities = estimate_distribution(90.0, curve, 0, 100)
    assert answers == list(range(101)) and sum(probabilities) == pytest.approx(1.0)
    rng = random.Random(1)
    drawn = [estimate_answer(90.0, curve, 0, 100, rng) for _ in range(40_000)]
    assert min(drawn) >= 0 and max(drawn) <= 100
    for answer in (0, 88, 100):  # a lapse's share, the mode, the clipped end
        share = drawn.count(answer) / len(drawn)
        assert share == pytest.approx(probabilities[answer], abs=0.006)


def test_the_observer_answers_an_estimate_from_the_charts_chunk_only():
    made = _drawn("angle", 61.0)
    trial = read_trial(made.png).model_dump()
    seeing = Observer({"graphical/angle": Curve(0.0, 0.01, 0.0)})
    assert seeing.answer(trial) == "61"
    blind = Observer({})
    guesses = {Observer({}, seed=s).answer(trial) for s in range(30)}
    assert len(guesses) > 10 and all(0 <= int(g) <= 100 for g in guesses)
    assert blind.answer({**trial, "options": ["a", "b"]}) == "I cannot tell."


def _curve(name: str, error: float | None, rank: float | None) -> FittedCurve:
    return FittedCurve(condition=name, kind="estimate", unit="%", n=10, n_errors=0,
                       n_unparsed=0, points=[], status="measured", error=error,
                       published_rank=rank)


def test_the_order_of_the_conditions_is_set_beside_peoples_with_spearmans_rho():
    people = [1, 2, 3, 3, 4, 6]
    errors = [0.5, 1.0, 1.6, 2.1, 2.8, 3.3]
    names = [e.name for e in ENCODINGS]
    rng = random.Random(2)
    fitted = [Fitted(_curve(n, e, r), tuple(e + rng.gauss(0, 0.05) for _ in range(200)))
              for n, e, r in zip(names, errors, people, strict=True)]
    [found] = agreement(ranked(fitted, "estimate"), "estimate", "C&M")
    assert found.value == pytest.approx(0.9856, abs=1e-4) and found.ci95 is not None
    assert found.ci95[0] == found.ci95[1] == found.value
    assert "people's (C&M): position-common, position-nonaligned, length = angle" in found.note
    assert [f.curve.rank for f in ranked(fitted, "estimate")] == [1, 2, 3, 4, 5, 6]
    backwards = [Fitted(_curve(n, -e, r)) for n, e, r in zip(names, errors, people,
                                                             strict=True)]
    [reversed_] = agreement(backwards, "estimate", "C&M")
    assert reversed_.value == pytest.approx(-0.9856, abs=1e-4) and reversed_.ci95 is None
    tied = [Fitted(_curve(n, -3.0, r)) for n, r in zip(names, people, strict=True)]
    [none] = agreement(tied, "estimate", "C&M")
    assert none.value is None and "no order" in str(none.reason)
    few = [Fitted(_curve(n, e, r)) for n, e, r in zip(names[:2], errors[:2], people[:2],
                                                      strict=True)]
    assert agreement(few, "estimate", "C&M")[0].value is None
    assert agreement([Fitted(_curve("x", 1.0, None))], "estimate", "C&M") == []
    unranked = [Fitted(_curve("x", None, None)), Fitted(_curve("y", None, None))]
    assert ranked(unranked, "comparison") == unranked  # no published order: no ranks


def test_answers_are_read_as_one_number_and_one_outside_the_range_is_counted(serve, small,
                                                                           tmp_path):
    replies = iter(["45%", "The smaller is about 30 or 40.", "150", "-5", "I think 12.5"])
    server = serve(answer=lambda prompt: next(replies, "50"))
    _, metrics = _run(server, small, tmp_path / "run", "--conditions", "area",
                      "--samples", "5", "--concurrency", "1")
    [curve] = metrics["curves"]
    assert (metrics["n"], metrics["n_unparsed"], metrics["n_out_of_range"]) == (5, 1, 2)
    assert curve["status"] == "not measured" and "2 answer(s)" in curve["reason"]
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").open()]
    judged = sorted(r["scores"]["answer"]["judged"] for r in records
                    if "judged" in r["scores"]["answer"])
    assert judged == [12.5, 45.0]


def test_a_run_on_a_seeing_observer_shows_its_errors_and_fits_100_columns(serve, small,
                                                                         tmp_path):
    observer = Observer({"graphical/position-common": Curve(0.0, 2.0, 0.0),
                         "graphical/area": Curve(0.0, 12.0, 0.0)})
    result, metrics = _run(serve(answer=answer_observer(observer)), small, tmp_path / "run")
    assert all(len(line) <= 100 for line in result.output.splitlines())
    common, area = metrics["curves"]
    assert common["error"] < area["error"] and (common["rank"], area["rank"]) == (1, 2)
    assert common["published_rank"] == 1 and area["published_rank"] == 4
    low, high = common["error_ci95"]
    assert low <= common["error"] <= high
    assert [j["level"] for j in common["judged"]] == list(LEVELS)
    [rho] = metrics["summaries"]
    assert rho["value"] is None and "needs 3" in rho["reason"]
    assert "log2 error" in result.output and "Cleveland & McGill 1984, p. 536" in result.output
    shown = invoke("show", tmp_path / "run")
    assert "position-common: every level" in shown.output
    csv = (tmp_path / "run" / "curves.csv").read_text().splitlines()
    assert "error_low" in csv[0] and len(csv) == 3


@pytest.mark.slow
def test_compare_sets_runs_side_by_side_one_column_an_encoding(serve, small, tmp_path):
    for seed in (0, 1):
        observer = Observer({"graphical": Curve(0.0, 4.0 + 8 * seed, 0.0)}, seed=seed)
        _run(serve(answer=answer_observer(observer)), small, tmp_path / f"run{seed}")
    compared = invoke("compare", tmp_path / "run0", tmp_path / "run1", "--out",
                      tmp_path / "compared")
    assert compared.exit_code == 0, compared.output
    assert re.search(r"Model +Run +rank correlation.* +position-common +area", compared.output)
    assert "midmean log2 error (lower: more accurate)" in compared.output
    # the second observer's SD is three times the first's: its errors are larger, tested on
    # each run's own answers resampled
    text = " ".join(compared.output.split())
    assert "Differences (bootstrap of the trials)" in text
    found = re.search(r"position-common log2 error (\S+) (\S+) \+(\S+) \((\S+) to (\S+)\) "
                      r"(\S+)\*", text)
    assert found is not None, text
    assert float(found.group(2)) > float(found.group(1)) and float(found.group(4)) > 0
    assert all(len(line) <= 100 for line in compared.output.splitlines())
    assert (tmp_path / "compared" / "comparison.html").exists()


def test_a_malformed_row_is_skipped_with_one_line_naming_file_and_field(serve, small,
                                                                       tmp_path):
    data = tmp_path / "data"
    for name in ("position-common", "area"):
        (data / name).mkdir(parents=True)
        table = pq.read_table(small / name / "shard_00000.parquet")
        if name == "area":
            options = table.column("options").to_pylist()
            options[3] = ["zero"]
            table = table.set_column(table.schema.get_field_index("options"), "options",
                                     [options])
        pq.write_table(table, data / name / "shard_00000.parquet")
    observer = Observer({"graphical": Curve(0.0, 5.0, 0.0)})
    result, metrics = _run(serve(answer=answer_observer(observer)), data, tmp_path / "run")
    said = [line for line in result.output.splitlines() if "field `options`" in line]
    assert len(said) == 1 and re.search(r"area/shard_00000\.parquet", said[0])
    assert metrics["n"] == 23


def test_the_random_baseline_answers_numbers_and_errs_by_about_four_log2_units(small,
                                                                             tmp_path):
    result = invoke("graphical", "--backend", "builtin", "--model", "random", "--data",
                    small, "--out", tmp_path / "run", "--no-progress", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["n_unparsed"] == metrics["n_out_of_range"] == 0
    assert all(c["error"] > 2.5 for c in metrics["curves"])


@pytest.mark.slow
def test_the_pixel_reader_answers_every_chart_exactly(tmp_path):
    data, run = tmp_path / "data", tmp_path / "run"
    written = invoke("data", "synth-graphical", "--out", data, "--n", "1")
    assert written.exit_code == 0, written.output
    result = invoke("graphical", "--data", data, "--backend", "builtin", "--model", "reader",
                    "--out", run, "--no-progress")
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 100 for line in result.output.splitlines())
    metrics = json.loads((run / "metrics.json").read_text())
    assert [c["condition"] for c in metrics["curves"]] == list(CONDITIONS)
    assert all(c["error"] == -3 and c["n"] == 12 for c in metrics["curves"])
    assert metrics["summaries"][0]["value"] is None  # every error the same: no order
    assert (run / "report.html").exists()


@pytest.mark.slow
def test_a_known_observers_errors_and_order_are_recovered_through_the_loopback(serve,
                                                                             tmp_path):
    """One run of 120 trials an encoding on three encodings: each midmean near the
    observer's true one (its exact answer distribution summed) and the order right."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "measure"))
    from paradigm_recovery import estimate_truth

    names = ("position-common", "length", "area")
    sds = {"position-common": 2.0, "length": 6.0, "area": 15.0}
    data = tmp_path / "data"
    write_dataset(PARADIGM, data, Design(conditions=names), seed=3)
    observer = Observer({f"graphical/{n}": Curve(0.0, sd, 0.02) for n, sd in sds.items()},
                        seed=5)
    _, metrics = _run(serve(answer=answer_observer(observer)), data, tmp_path / "run")
    for curve in metrics["curves"]:
        truth = estimate_truth(Curve(0.0, sds[curve["condition"]], 0.02), LEVELS, 0, 100,
                               "integrate", 0)
        assert curve["error"] == pytest.approx(truth, abs=0.35)
    assert [c["rank"] for c in metrics["curves"]] == [1, 2, 3]
    [rho] = metrics["summaries"]
    assert rho["value"] == pytest.approx(1.0)
