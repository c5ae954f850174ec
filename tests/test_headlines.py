"""Each benchmark's main number (`BenchmarkDefinition.headline`), read from metrics.json:
from real builtin runs where one is quick (SalBench, IllusionBench, the image-question
benchmark), else from metrics in the shape the benchmark's own metrics model checks; what
cannot be read is absent with a reason, never 0."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from cli_helpers import invoke

from visioneval.core import registry
from visioneval.core.headline import Headline, from_block
from visioneval.core.store import RunStore
from visioneval.stats.bootstrap import HOLDS_FROM, few_clusters_note

EXAMPLE = Path(__file__).parents[1] / "examples" / "vqa" / "questions.jsonl"


def _run(out: Path, *args: object) -> dict:
    result = invoke(*map(str, args), "--backend", "builtin", "--model", "random", "--out", out,
                    "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    return RunStore.open(out).read_metrics()


@pytest.fixture(scope="module")
def made(synth_data, illusion_data, tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("headlines")
    return {
        "salbench": _run(root / "s", "salbench", "--data-dir", synth_data, "--configs",
                         "P3,P3_box,P3_box_img"),
        "illusionbench": _run(root / "i", "illusionbench", "--data-dir", illusion_data),
        "vqa": _run(root / "v", "vqa", "--data", EXAMPLE, "--scorer", "choice"),
    }


def _headline(name: str, metrics: dict) -> Headline:
    definition = registry.definition(name)
    definition.metrics_model.model_validate(metrics)  # the shape the benchmark writes
    found = definition.headline(metrics)
    assert found is not None
    return found


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def test_salbench_pools_one_image_sets_tasks_and_names_the_rest(made):
    metrics = made["salbench"]
    pooled = metrics["P3"]["pooled_tasks"]
    found = _headline("salbench", metrics)
    assert found.label == "macro F1, P3 3 tasks pooled"
    assert (found.value, found.n) == (pooled["macro_f1"], pooled["n"])
    assert found.value_text == _percent(pooled["macro_f1"])
    assert found.interval == tuple(pooled["macro_f1_ci95"])
    # Few scenes: the interval carries the note (the pooled run has fewer than HOLDS_FROM).
    assert pooled["macro_f1_ci95_n_clusters"] < HOLDS_FROM
    assert found.why == few_clusters_note(pooled["macro_f1_ci95_n_clusters"], "image")
    # One config: its own strict macro F1; a second image set is left to the report.
    one = _headline("salbench", {"P3_box": metrics["P3_box"]})
    assert one.label == "macro F1, P3_box"
    assert one.value == metrics["P3_box"]["strict"]["macro_f1"]
    both = dict(metrics) | {"O3": copy.deepcopy(metrics["P3"])}
    both["O3"].pop("pooled_tasks")
    assert _headline("salbench", both).label == "macro F1, P3 3 tasks pooled; O3 in the report"


def test_a_salbench_config_without_answers_says_why(made):
    block = copy.deepcopy(made["salbench"]["P3"])
    strict = block["strict"]
    for key in [k for k in strict if k.startswith(("exact_match", "macro_f1", "sample_f1"))]:
        strict.pop(key)
    strict.update(n=0, n_errors=8, unavailable="no scored samples (8 failed requests)")
    block.pop("pooled_tasks")
    found = _headline("salbench", {"P3": block})
    assert found.value is None and found.value_text == "-"
    assert found.why == "no scored samples (8 failed requests)"


def test_illusionbench_shows_its_first_protocols_pooled_recall(made):
    metrics = made["illusionbench"]
    protocol = next(iter(metrics))
    pooled = metrics[protocol]["ICON"]["pooled"]
    found = _headline("illusionbench", metrics)
    assert found.label == f"recall ICON, both tasks ({protocol}); +2 subsets"
    assert (found.value, found.n) == (pooled["recall"], pooled["n"])
    assert found.interval == tuple(pooled["recall_ci95"])


def test_the_image_question_benchmark_names_its_scorer(made):
    metrics = made["vqa"]
    found = _headline("vqa", metrics)
    assert found.label == "accuracy (choice scorer)"
    assert (found.value, found.n) == (metrics["overall"]["accuracy"], metrics["overall"]["n"])


THRESHOLD = {"feature": "orientation", "set_size": 16, "unit": "deg", "criterion": 0.75,
             "guess": 1 / 3, "form": "weibull", "n_trials": 96, "n_levels": 8}
PSYCHOPHYSICS = {"criterion": 0.75, "form": "weibull", "guess": 1 / 3, "n": 96, "n_errors": 0,
                 "n_unparsed": 0, "experiments": {"detection": {"n": 96, "n_errors": 0,
                                                                "n_unparsed": 0}}}


def test_psychophysics_shows_its_first_threshold_in_its_unit():
    fits = [THRESHOLD | {"status": "reached", "threshold": 2.16, "threshold_ci95": [0.79, None]},
            THRESHOLD | {"feature": "size", "status": "reached", "threshold": 0.1,
                         "threshold_ci95": [0.05, 0.2]}]
    found = _headline("psychophysics", PSYCHOPHYSICS | {"thresholds": fits})
    assert found.label == "orientation threshold, set size 16; +1 fits"
    wide = [fits[0] | {"dispersion": 3.35, "dispersion_p": 0.004}, fits[1]]
    flagged = _headline("psychophysics", PSYCHOPHYSICS | {"thresholds": wide})
    assert flagged.label == ("orientation threshold, set size 16; φ 3.35, more than binomial; "
                             "+1 fits")
    calm = [fits[0] | {"dispersion": 1.2, "dispersion_p": 0.3}]
    assert _headline("psychophysics", PSYCHOPHYSICS | {"thresholds": calm}).label == \
        "orientation threshold, set size 16"
    assert (found.value_text, found.interval_text, found.n) == ("2.16 deg", "0.79 or more", 96)
    missed = _headline("psychophysics", PSYCHOPHYSICS | {"thresholds": [THRESHOLD | {
        "status": "not reached", "reason": "above 0.75 already at the lowest level"}]})
    assert missed.value is None
    assert missed.why == "not reached: above 0.75 already at the lowest level"
    nothing = _headline("psychophysics", PSYCHOPHYSICS | {
        "thresholds_unavailable": "no detection trials"})
    assert nothing.value is None and nothing.why == "no detection trials"


def test_psychophysics_without_detection_shows_its_first_dprime():
    presence = {"experiment": "presence", "feature": "color", "set_size": 16, "level": 16.7,
                "unit": "dE00", "n_signal": 20, "hits": 18, "n_noise": 20, "false_alarms": 2,
                "n_unparsed": 0, "dprime": 2.56, "dprime_ci95": [1.7, 3.4]}
    found = _headline("psychophysics", PSYCHOPHYSICS | {"detection_theory": [presence]})
    assert found.label == "d′ presence color at 16.7 dE00"
    assert (found.value_text, found.interval_text, found.n) == ("2.56", "1.7 to 3.4", 40)


def test_layout_shows_a_mean_and_says_it_has_no_interval():
    metrics = {"samples": 3, "samples_with_metric_error": 0, "summary": {
        "gen": {"canvas_fill": {"mean": 0.61, "median": 0.6, "count": 3}},
        "other": {"canvas_fill": {"mean": 0.5, "median": 0.5, "count": 3}}}}
    found = _headline("layout", metrics)
    assert found.label == "canvas_fill mean, gen; +1 variants"
    assert (found.value_text, found.n) == ("0.61", 3)
    assert found.why == "no interval: CANVAS reports means without an interval"
    empty = _headline("layout", {"samples": 0, "samples_with_metric_error": 0, "summary": {}})
    assert empty.value is None and empty.why == "no variant was scored"


def test_evaluate_shows_the_first_evaluators_pass_rate():
    block = {"n": 5, "processed": 4, "errors": 1, "skipped": 0, "passed": 3, "pass_rate": 0.75,
             "pass_rate_se": 0.2, "pass_rate_ci95": [0.25, 1.0], "mean_score": 0.7}
    metrics = {"evaluators": {"judge": block, "count": block}, "cases": {}}
    found = _headline("evaluate", metrics)
    assert found.label == "pass rate, judge; +1 evaluators"
    assert (found.value_text, found.interval_text, found.n) == ("75.0%", "25.0 to 100.0", 4)


def test_the_default_reading_is_accuracy_and_an_interval_it_lacks_says_why():
    from visioneval.core.benchmark import BenchmarkDefinition

    metrics = {"score": "correct", "groups": {}, "overall": {
        "n": 1, "n_errors": 0, "accuracy": 1.0,
        "accuracy_ci95_unavailable": "fewer than 2 scored samples"}}
    found = BenchmarkDefinition().headline(metrics)
    assert found is not None and found.label == "accuracy" and found.value_text == "100.0%"
    assert found.why == "no interval: fewer than 2 scored samples"
    assert BenchmarkDefinition().headline({"accuracy": 0.5}) is None  # another shape
    assert from_block("x", None, "x").why == "not in metrics.json"
