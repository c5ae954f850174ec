"""The psychophysics benchmark end to end against the loopback's simulated observer: the
fitted threshold's 95% interval covers the observer's true criterion-level threshold, a flat
observer is "not reached", an always-yes observer has d′ ≈ 0, failed requests are errors,
the report draws the psychometric function, and compare, shards and merge go through the
generic code."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from cli_helpers import invoke

from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset
from visioneval.benchmarks.psychophysics.parse import feature_named_first, yes_or_no
from visioneval.commands.loopback import ObserverFlags, build_script
from visioneval.stats.psychometric import criterion_level
from visioneval.stats.psychometric_fit import fit

ALPHA, BETA, LAPSE = 8.0, 3.0, 0.02
LEVELS = {"orientation": (1.0, 2.0, 4.0, 8.0, 16.0, 32.0),
          "color": (1.0, 2.0, 4.0, 8.0, 16.0, 32.0), "size": (0.1, 0.4)}


@pytest.fixture(scope="module")
def stimuli(tmp_path_factory) -> Path:
    """Detection and presence arrays: 6 levels x 20 trials of orientation and colour."""
    root = tmp_path_factory.mktemp("psychophysics")
    write_dataset(root, Design(experiments=("detection", "presence"), levels=LEVELS,
                               set_sizes=(4,), trials=20, pool_levels={}), seed=1)
    return root


def _observer(serve, **flags):
    return serve(answer=build_script(("m",), "observer", 0.0, 0.0, "500", 0,
                                     observer=ObserverFlags(**flags)).answer)


def _run(server, data: Path, out: Path, *extra: str, code: int = 0):
    result = invoke("psychophysics", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data", data, "--out", out,
                    "--no-progress", "--no-cache", "--bootstrap", "200", "--backoff-base",
                    "0.01", "--backoff-cap", "0.05", *extra)
    assert result.exit_code == code, result.output
    return result


def _metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text())


def _threshold(metrics: dict, feature: str) -> dict:
    return next(t for t in metrics["thresholds"] if t["feature"] == feature)


def test_the_slope_at_threshold_and_the_fitted_beta_are_named_apart():
    """A Weibull with β = 3 and α = 8: its slope at the 0.75 threshold is dψ/dx there, not
    β; the terminal's main table, thresholds.csv and the report say which is which."""
    import io

    from rich.console import Console

    from visioneval.benchmarks.psychophysics import tables
    from visioneval.stats.psychometric import psi_slope

    at = criterion_level(0.75, ALPHA, BETA, 1 / 3, LAPSE, "weibull")
    assert at is not None
    slope = psi_slope(at, ALPHA, BETA, 1 / 3, LAPSE, "weibull")
    metrics = {"criterion": 0.75, "form": "weibull", "n": 120, "n_errors": 0,
               "n_unparsed": 0, "thresholds": [{
                   "feature": "orientation", "set_size": 4, "unit": "deg", "criterion": 0.75,
                   "status": "reached", "threshold": at, "threshold_ci95": [at - 1, at + 1],
                   "slope": slope, "beta": BETA, "lapse": LAPSE, "n_trials": 120}]}
    assert tables.THRESHOLD_HEADER[5:7] == ["slope at threshold", "beta"]
    assert tables.threshold_rows(metrics)[0][5:7] == [f"{slope:.3g}", "3"]
    out = Console(file=io.StringIO(), width=100)
    tables.show_main(metrics, "psychophysics: m", out)
    text = out.file.getvalue()
    lines = text.splitlines()
    at_header = next(i for i, x in enumerate(lines) if x.startswith("feature"))
    assert lines[at_header - 1].split() == ["slope", "at"]  # the column's name on two lines
    header = lines[at_header].split()
    slope_at = len(header) - 1 - header[::-1].index("threshold")  # "slope at / threshold"
    row = next(x.split() for x in lines if x.startswith("orientation"))
    # the interval "a to b" is one more word in the row than "95% interval" in the header
    assert row[slope_at + 1] == f"{slope:.2g}" and row[header.index("β") + 1] == "3"
    said = " ".join(text.split())  # the note wraps at 100 columns
    assert "slope at threshold: dψ/dx there" in said and "fitted Weibull's β" in said


def test_answers_are_read_as_the_feature_named_first_or_yes_no():
    assert feature_named_first("Size, then colour") == "size"
    assert feature_named_first("Not colour but orientation.") == "orientation"
    assert feature_named_first("I cannot tell") is None
    assert yes_or_no("Yes, one is tilted.") == "yes" and yes_or_no("No.") == "no"
    assert yes_or_no("Nothing stands out") is None


@pytest.mark.slow
def test_the_threshold_interval_covers_the_observers_and_a_flat_one_is_not_reached(
        serve, stimuli, tmp_path):
    # orientation follows ψ(8, 3, 0.02); colour has no curve: the observer guesses (1/3)
    server = _observer(serve, curves=f"orientation={ALPHA:g}:{BETA:g}:{LAPSE:g}")
    run = tmp_path / "run"
    result = _run(server, stimuli, run)
    metrics = _metrics(run)
    true = criterion_level(0.75, ALPHA, BETA, 1 / 3, LAPSE, "weibull")
    assert true is not None
    orientation = _threshold(metrics, "orientation")
    low, high = orientation["threshold_ci95"]
    assert orientation["status"] == "reached" and low <= true <= high
    assert orientation["n_trials"] == 120 and orientation["unit"] == "deg"
    colour = _threshold(metrics, "color")
    assert colour["status"] == "not reached" and "threshold" not in colour
    assert "guessing" in colour["reason"]
    size = _threshold(metrics, "size")
    assert size["status"] == "not reached"  # 2 levels of a guessed feature
    assert metrics["n"] == 2 * (6 + 6 + 2) * 20 and metrics["n_errors"] == 0
    assert "thresholds at 0.75 correct" in result.output and "7." in result.output \
        or f"{orientation['threshold']:.3g}" in result.output
    page = (run / "report.html").read_text()
    assert "orientation (set size 4): reached" in page and "fitted ψ" in page
    assert "not reached: color" in page
    assert (run / "thresholds.csv").exists() and (run / "dprime.csv").exists()
    # dψ/dx at the threshold and the fitted β, named apart in the CSV and the terminal
    row = next(r for r in csv.DictReader((run / "thresholds.csv").open())
               if r["feature"] == "orientation")
    assert row["slope at threshold"] == f"{orientation['slope']:.3g}"
    assert row["beta"] == f"{orientation['beta']:.3g}" != row["slope at threshold"]
    shown = next(x.split() for x in result.stdout.splitlines() if x.startswith("orientation"))
    assert f"{orientation['slope']:.2g}" in shown and f"{orientation['beta']:.2g}" in shown
    # the dispersion φ beside the threshold: the fit's, refitted from the run's own counts
    points = sorted((p for p in metrics["points"] if p["experiment"] == "detection"
                     and p["feature"] == "orientation"), key=lambda p: p["level"])
    again = fit([p["level"] for p in points], [p["correct"] for p in points],
                [p["n"] for p in points], 1 / 3, resamples=0)
    assert orientation["dispersion"] == pytest.approx(again.dispersion)
    assert orientation["dispersion_p"] == pytest.approx(again.dispersion_p)
    assert row["dispersion"] == f"{orientation['dispersion']:.2f}"
    assert metrics["dispersion_model"] == "binomial"
    # compare: one row per run, thresholds per feature with their intervals
    other = tmp_path / "other"
    _run(_observer(serve, curves="orientation=4:3:0.02", seed=1), stimuli, other,
         "--experiments", "detection", "--dispersion", "fitted")
    assert _metrics(other)["dispersion_model"] == "fitted"
    table = tmp_path / "table"
    compared = invoke("compare", run, other, "--out", table)
    assert compared.exit_code == 0, compared.output
    text = (table / "comparison.csv").read_text()
    assert "orientation threshold (deg)" in text and "not reached" in text
    assert _threshold(_metrics(other), "orientation")["threshold"] < orientation["threshold"]


@pytest.mark.slow
def test_an_always_yes_observer_has_no_sensitivity(serve, stimuli, tmp_path):
    server = _observer(serve, dprime=0.0, criterion=-math.inf)
    run = tmp_path / "yes"
    _run(server, stimuli, run, "--experiments", "presence")
    rows = _metrics(run)["detection_theory"]
    assert len(rows) == 14
    for row in rows:
        assert row["hits"] == row["n_signal"] and row["false_alarms"] == row["n_noise"]
        assert abs(row["dprime"]) <= 0.3 and row["c"] < -1
    assert _metrics(run)["thresholds_unavailable"] == "no detection trials in this run"


@pytest.mark.slow
def test_failed_requests_are_errors_and_shards_merge(serve, stimuli, tmp_path):
    server = serve(answer=build_script(("m",), "observer", 0.0, 0.0, "500", 0,
                                       observer=ObserverFlags()).answer,
                   fail_first=3)
    parts = [tmp_path / f"part{k}" for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        _run(server, stimuli, part, "--experiments", "detection", "--max-attempts", "1",
             "--shard", f"{k}/2", "--no-report", code=1 if k == 1 else 0)
    failed = sum(_metrics(p)["n_errors"] for p in parts)
    assert failed == 3
    merged = tmp_path / "merged"
    result = invoke("merge", *parts, "--out", merged, "--no-report")
    assert result.exit_code == 1, result.output  # the failed samples are said, not scored
    metrics = _metrics(merged)
    assert (metrics["n"], metrics["n_errors"]) == (277, 3)
    # a resume retries only the failed requests; the server now answers them
    result = invoke("psychophysics", "--resume", merged, "--base-url",
                    server.base_url + "/v1", "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    metrics = _metrics(merged)
    assert (metrics["n"], metrics["n_errors"]) == (280, 0)
    assert (server.stats.requests, server.stats.answered) == (283, 280)
    assert {t["feature"] for t in metrics["thresholds"]} == {"orientation", "color", "size"}


@pytest.mark.slow
def test_the_set_size_experiment_adds_items_at_one_clear_difference(serve, tmp_path):
    """4 to 64 items at one level per feature; the observer answers from ψ at that level
    whatever the number of items, so the slope per doubling is near 0 with an interval
    around it, and the three-way question is asked (no yes/no)."""
    data = tmp_path / "data"
    write_dataset(data, Design(experiments=("setsize",), trials=6,
                               setsize_levels={"orientation": 6.0, "color": 6.0,
                                               "size": 0.15}), seed=2)
    observer = _observer(serve)
    _run(observer, data, tmp_path / "run")
    metrics = _metrics(tmp_path / "run")
    slopes = {s["feature"]: s for s in metrics["set_size"]}
    assert set(slopes) == {"orientation", "color", "size"}
    for block in slopes.values():
        assert block["experiment"] == "setsize"
        assert block["set_sizes"] == [4, 8, 16, 32, 64] and block["n"] == [6] * 5
        low, high = block["points_ci95"]
        assert low <= block["points_per_doubling"] <= high
    assert "thresholds" not in metrics and "detection_theory" not in metrics


@pytest.mark.slow
def test_heterogeneous_distractors_lower_the_sensitivity_of_a_feature_search(tmp_path):
    """The heterogeneity experiment (yes/no, distractors jittered within ±spread): popout's
    fixed criterion says "yes" to jittered target-absent arrays, so its d′ at a clear
    colour difference falls from near-perfect to about 0 as the jitter grows."""
    data = tmp_path / "data"
    write_dataset(data, Design(experiments=("heterogeneity",),
                               levels={"orientation": (1.0, 20.0), "color": (1.0, 20.0),
                                       "size": (0.1, 0.5)},
                               heterogeneity_spreads={"color": (0.5, 12.0)}, trials=10,
                               pool_levels={}), seed=5)
    run = tmp_path / "run"
    result = invoke("psychophysics", "--backend", "builtin", "--model", "popout", "--data",
                    data, "--out", run, "--no-progress")
    assert result.exit_code == 0, result.output
    found = {d["spread"]: d for d in _metrics(run)["detection_theory"]}
    assert set(found) == {0.5, 12.0}
    assert all(d["experiment"] == "heterogeneity" and d["level"] == 20.0
               for d in found.values())
    assert found[0.5]["hits"] == 5 and found[0.5]["false_alarms"] == 0
    assert found[0.5]["dprime"] > 1.5 > found[12.0]["dprime"]
    assert found[12.0]["false_alarms"] >= 4
    assert "spread" in result.output and "heterogeneity" in result.output  # the main view
    assert "heterogeneity (yes/no)" in invoke("show", run).output  # every level
