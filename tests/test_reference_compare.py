"""`visioneval compare RUN... --reference paper [--reference-model NAME]`: real loopback runs
beside the published rows, cell by cell (run, published, difference, inside the run's 95%
interval?), with every setting that differs from the published protocol, in the terminal
and in the compare page, Markdown and reference.csv."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from cli_helpers import flat, invoke, load, salbench_args

from visioneval.core import registry
from visioneval.core.published import Column, RunValue, run_value
from visioneval.core.runfiles import RunInfo
from visioneval.report.reference import CellLine

SALBENCH = registry.definition("salbench").published()
ILLUSION = registry.definition("illusionbench").published()


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")


def _text(output: str) -> str:
    return flat(output)


def _csv(path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def _salbench_run(serve, data, out, model, *extra):
    server = serve(models=(model,))
    result = invoke(*salbench_args(server, data, out, "--configs", "P3,P3_box,P3_box_img",
                                   "--model", model, *extra))
    assert result.exit_code == 0, result.output
    return out


def _published(table, model, shots, key):
    return next(r for r in table.rows_of(model) if r.setting["shots"] == shots).cells[key]


def _run_metric(metrics, key) -> float:
    """A published column's run value from metrics.json, found by the column key's parts."""
    image_set, task, metric, *label = key.split("/")
    config = image_set + {"D": "", "R": "_box", "VR": "_box_img"}[task]
    block = metrics[config]["strict"]
    if label:
        return 100 * block["per_class"][label[0]]["f1"]
    return 100 * block["exact_match" if metric == "em" else "macro_f1"]


def _run_interval(metrics, key) -> tuple[float, float] | None:
    """The run's 95% interval of a published column, in percent (None: per-class F1)."""
    image_set, task, metric, *label = key.split("/")
    if label:
        return None
    config = image_set + {"D": "", "R": "_box", "VR": "_box_img"}[task]
    low, high = metrics[config]["strict"]["exact_match_ci95" if metric == "em"
                                          else "macro_f1_ci95"]
    return 100 * low, 100 * high


def test_run_beside_the_published_row_matched_by_its_model_name(serve, synth_data, tmp_path):
    run = _salbench_run(serve, synth_data, tmp_path / "run", "gpt-4o-2024-08-06")
    result = invoke("compare", run, "--reference", "paper", "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    text = _text(result.stdout)
    assert "gpt-4o-2024-08-06 (run) beside GPT-4o (shots 0), matched by the run's model name" \
        in text
    rows = _csv(tmp_path / "cmp" / "reference.csv")
    expected = [c.key for c in SALBENCH.columns if c.key.startswith("P3/")]
    assert [r["key"] for r in rows] == expected  # every P3 cell, in the table's order
    metrics = load(run)
    for row in rows:
        published = _published(SALBENCH, "GPT-4o", 0, row["key"])
        assert float(row["published"]) == published
        assert float(row["run"]) == pytest.approx(_run_metric(metrics, row["key"]), abs=1e-4)
        assert float(row["difference"]) == pytest.approx(float(row["run"]) - published,
                                                         abs=2e-4)
        assert row["published_model"] == "GPT-4o" and row["setting"] == "shots 0"
        interval = _run_interval(metrics, row["key"])
        if interval is None:  # per-class F1 has no interval
            assert row["verdict"] == "no interval" and row["ci95_low"] == ""
            # The terminal shows the same line: cell, run, no interval, published, difference.
            assert (f"{row['cell']} {float(row['run']):.1f} - {published:.1f} "
                    f"{float(row['difference']):+.1f} no interval") in text
        else:  # the run's bootstrap interval (metrics.json) decides
            low, high = interval
            assert float(row["ci95_low"]) == pytest.approx(low, abs=1e-4)
            assert row["verdict"] == ("inside" if low <= published <= high else "at the edge"
                                      if low - 0.05 <= published <= high + 0.05 else "outside")
    assert ("not in this run: O3 (natural): exact match and F1 Overall (6 cells); O3: "
            "per-class F1 (21 cells)") in text
    assert "samples: the data has P3 8, P3_box 8, P3_box_img 8 rows; the published set 2589 " \
           "per P3 config" in text
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "## Beside the published numbers" in md
    assert "samples: the data has P3 8, P3\\_box 8" in md
    assert md.count("| no interval |") == sum(_run_interval(metrics, r["key"]) is None
                                              for r in rows)
    page = (tmp_path / "cmp" / "comparison.html").read_text()
    assert "beside GPT-4o (shots 0)" in page and "Where the published numbers come from" in page
    assert SALBENCH.sources[0].url in page


def _wilson(successes: float, n: int) -> list[float]:
    z = 1.959963984540054
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [centre - half, centre + half]


def test_intervals_in_metrics_decide_inside_or_outside(serve, synth_data, tmp_path):
    """A run whose metrics.json carries `k_ci95` (the intervals contract): each published
    value is checked against the run's interval; `k_ci95_unavailable` is shown as the
    reason."""
    run = _salbench_run(serve, synth_data, tmp_path / "run", "gpt-4o")
    metrics = load(run)
    for block in metrics.values():
        strict = block["strict"]
        strict["exact_match_ci95"] = _wilson(strict["exact_match"] * strict["n"], strict["n"])
        strict.pop("macro_f1_ci95", None)
        strict["macro_f1_ci95_unavailable"] = "fewer than 10 samples"
    (run / "metrics.json").write_text(json.dumps(metrics))
    result = invoke("compare", run, "--reference", "paper", "--reference-model", "GPT-4o",
                    "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    rows = {r["key"]: r for r in _csv(tmp_path / "cmp" / "reference.csv")}
    for task, config in (("D", "P3"), ("R", "P3_box"), ("VR", "P3_box_img")):
        em = rows[f"P3/{task}/em"]
        low, high = (100 * x for x in metrics[config]["strict"]["exact_match_ci95"])
        assert float(em["ci95_low"]) == pytest.approx(low, abs=1e-4)
        assert float(em["ci95_high"]) == pytest.approx(high, abs=1e-4)
        published = float(em["published"])
        expected = "inside" if low <= published <= high else \
            "at the edge" if low - 0.05 <= published <= high + 0.05 else "outside"
        assert em["verdict"] == expected
        assert rows[f"P3/{task}/f1"]["verdict"] == "no interval (fewer than 10 samples)"
        assert rows[f"P3/{task}/f1/size"]["verdict"] == "no interval"
    assert f"{low:.1f} to {high:.1f}" in _text(result.stdout)


@pytest.mark.parametrize(("interval", "verdict"), [
    ((80.0, 90.0), "inside"), ((89.2, 89.2), "inside"), ((80.0, 89.15), "at the edge"),
    ((89.25, 95.0), "at the edge"), ((80.0, 89.1), "outside"), ((90.0, 99.0), "outside"),
])
def test_verdict_against_the_interval_allows_the_published_rounding(interval, verdict):
    column = Column("P3/D/em", "t", "", "EM D", "P3 D EM", "m")
    cell = CellLine(column, RunValue(85.0, interval), 89.2)
    assert cell.verdict(0.05) == verdict
    assert cell.difference == pytest.approx(-4.2)


def test_run_value_reads_the_interval_contract():
    assert run_value({"recall": 0.5, "recall_ci95": [0.4, 0.6]}, "recall") == \
        RunValue(50.0, (40.0, 60.0))
    assert run_value({"recall": 0.5, "recall_ci95_unavailable": "n = 1"}, "recall") == \
        RunValue(50.0, None, "no interval (n = 1)")
    missing = run_value({"n": 0, "unavailable": "no scored samples (3 failed requests)"},
                        "recall")
    assert missing.value is None and missing.missing.startswith("no scored samples")
    cell = CellLine(Column("k", "t", "", "n", "l", "m"), missing, 10.0)
    assert cell.difference is None and cell.verdict(0.1).startswith("not computed: no scored")


def test_settings_that_differ_are_named(serve, synth_data, tmp_path):
    few = _salbench_run(serve, synth_data, tmp_path / "few", "m", "--shots", "3",
                        "--prompt", "lmms-eval", "--num-samples", "4")
    plain = _salbench_run(serve, synth_data, tmp_path / "plain", "llava-v1.6-7b",
                          "--shard", "1/2")
    # Without --reference-model: the unmatched run says so (and lists the names), the other
    # run is matched by its own name; the comparison itself still succeeds.
    result = invoke("compare", few, plain, "--reference", "paper")
    assert result.exit_code == 0, result.output
    text = _text(result.stdout)
    assert ("m (few): no published row: the run's model 'm' matches no published model; "
            "name one with --reference-model (known: " + ", ".join(SALBENCH.model_names())
            + ")") in text
    assert "llava-v1.6-7b (plain) beside LLaVA-1.6-7B (shots 0)" in text
    assert "shard 1/2: this run holds part of the samples" in text
    # Claude-sonnet is published at 0 shots only: the 3-shot run is compared with that row,
    # and says so, with every other setting that differs.
    result = invoke("compare", few, "--reference", "paper", "--reference-model",
                    "claude-sonnet")
    assert result.exit_code == 0, result.output
    text = _text(result.stdout)
    assert "m (few) beside Claude-sonnet (shots 0), matched by --reference-model" in text
    for expected in (
            "shots 3: Claude-sonnet is published with shots 0 only; compared with shots 0",
            "prompt lmms-eval: the question plus lmms-eval's",
            "3 shots: examples chosen by visioneval's seeded rule (seed 0)",
            "samples: the first 4 rows of each config (--num-samples)"):
        assert f"- {expected}" in text
    # GPT-4o has a 3-shot row: compared with it, no shots difference.
    result = invoke("compare", few, "--reference", "paper", "--reference-model", "gpt-4o")
    text = _text(result.stdout)
    assert "beside GPT-4o (shots 3)" in text and "is published with shots" not in text


def test_reference_errors_are_one_line(serve, synth_data, tmp_path):
    run = _salbench_run(serve, synth_data, tmp_path / "run", "m")
    result = invoke("compare", run, "--reference", "paper", "--reference-model", "gpt-5")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: --reference-model 'gpt-5' matches no model "
                                     "published for salbench; known: "
                                     + ", ".join(SALBENCH.model_names()))
    result = invoke("compare", run, "--reference", "lmms-eval")
    assert result.exit_code == 2 and "--reference 'lmms-eval': choose from paper" in result.stderr
    result = invoke("compare", run, "--reference-model", "gpt-4o")
    assert result.exit_code == 2 and "--reference-model needs --reference paper" in result.stderr


def _illusion_run(serve, data, out, model, *extra):
    server = serve(models=(model,))
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", model, "--data-dir", data, "--out", out,
                    "--no-progress", *extra)
    assert result.exit_code == 0, result.output
    return out


def test_illusionbench_protocol_and_samples_differences(serve, illusion_data, tmp_path):
    strict = _illusion_run(serve, illusion_data, tmp_path / "strict", "GPT-4O",
                           "--protocol", "lmms-strict", "--subsets", "ICON")
    result = invoke("compare", strict, "--reference", "paper", "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    text = _text(result.stdout)
    assert "GPT-4O (strict) beside GPT-4o (shots 0), matched by the run's model name" in text
    assert "- protocol lmms-strict: the run has no original-protocol metrics" in text
    assert "samples: the data has ICON 12 images; the paper's: every image (ICON 20,064" \
        in text
    assert "not in this run: zero-shot recall, original protocol (4 cells)" in text
    rows = _csv(tmp_path / "cmp" / "reference.csv")
    metrics = load(strict)["lmms-strict"]["ICON"]
    assert [r["key"] for r in rows] == ["ICON/shape", "ICON/scene"]
    for row in rows:
        task = row["key"].split("/")[1]
        assert float(row["run"]) == pytest.approx(100 * metrics[task]["recall"], abs=1e-4)
        assert float(row["published"]) == _published(ILLUSION, "GPT-4o", 0, row["key"])
    sampled = _illusion_run(serve, illusion_data, tmp_path / "sampled", "gemini-flash",
                            "--protocol", "original", "--fix-quirks", "--num-samples", "6",
                            "--sample-seed", "1")
    result = invoke("compare", sampled, "--reference", "paper")
    text = _text(result.stdout)
    assert "beside Gemini-Flash (shots 0)" in text
    assert "original protocol (the paper's)" in text
    assert "- --fix-quirks: the original rule with its spelling quirks corrected" in text
    assert "- samples: a stratified random (seed 1) 6 images per subset" in text


def test_common_only_says_the_published_comparison_uses_all_samples(serve, synth_data,
                                                                      tmp_path):
    a = _salbench_run(serve, synth_data, tmp_path / "a", "gpt-4o", "--num-samples", "3")
    b = _salbench_run(serve, synth_data, tmp_path / "b", "gpt-4o")
    result = invoke("compare", a, b, "--common-only", "--reference", "paper",
                    "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    note = ("--common-only narrows the table above; the published comparison uses each run's "
            "own metrics (all its samples)")
    assert note in _text(result.stdout)
    assert note in (tmp_path / "cmp" / "comparison.md").read_text().replace("\\-", "-")


def test_an_o3_f1_over_three_classes_is_named():
    """A run whose O3 F1 averages fewer classes than the paper's (lmms-eval main's 3-class
    aggregation, e.g. numbers taken over from its output) is flagged; one over all 7 is not."""
    from visioneval.benchmarks.salbench.published import differences

    def metrics(classes):
        per_class = {c: {"f1": 0.5} for c in classes}
        return {"O3": {"strict": {"n": 10, "n_errors": 0, "exact_match": 0.5,
                                  "macro_f1": 0.5, "per_class": per_class}}}

    info = RunInfo.model_validate({"benchmark": "salbench",
                                   "backend": {"kind": "builtin", "model": "random"},
                                   "options": {"prompt": "paper", "shots": 0},
                                   "dataset": {"rows": {"O3": 10}}})
    three = differences(info, metrics(["orientation", "color", "size"]))
    assert ("O3: its F1 averages 3 classes (as lmms-eval main's O3 F1 does); the paper's "
            "averages all 7") in three
    all_seven = ["orientation", "color", "size", "focus", "shape", "location", "pattern"]
    seven = differences(info, metrics(all_seven))
    assert not any("classes" in d for d in seven)
    lmms = differences(info.model_copy(update={"options": {"prompt": "lmms-eval"}}),
                       metrics(all_seven))
    assert any(d.startswith("lmms-eval's own O3 F1 (all_cat_f1) is a 3-class mean") for d in lmms)
