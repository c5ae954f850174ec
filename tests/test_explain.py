"""`visioneval explain`: the waterfall from the paper's number to a run's. The steps add up,
each part of the protocol step is said, a run without what a step needs says so in one line,
and on the loopback server a scripted model with causes of known size (a parser difference,
a prompt difference, a label set with known swaps, a server that halves the images) has each
cause found exactly and its design value inside the step's interval
(measure/explain_recovery.py)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from cli_helpers import flat, invoke

from visioneval.benchmarks.mmvp.synth import write_synthetic
from visioneval.core.gap import GapHeadlines, ProtocolHeadline
from visioneval.harness import waterfall
from visioneval.harness.differences import CauseMove, DifferenceSummary, ProtocolDifferences

SCRIPT = Path(__file__).parents[1] / "measure" / "explain_recovery.py"


def headline(protocol, labels, value, half=5.0, metric="pair accuracy"):
    return ProtocolHeadline(protocol=protocol, labels=labels, value=value,
                            interval=(value - half, value + half), metric=metric)


def test_steps_add_up_from_the_papers_number_to_yours():
    sent = GapHeadlines("pair_accuracy", "paper", [
        headline("paper", "original", 40.0), headline("lmms-eval", "original", 31.0),
        headline("lmms-eval", "corrected", 32.0, metric="pair accuracy")])
    seen = GapHeadlines("pair_accuracy", "paper", [headline("paper", "original", 30.0, 4.0)])
    summary = DifferenceSummary(reference="paper", protocols=[ProtocolDifferences(
        protocol="lmms-eval", compared=300, causes=[
            CauseMove(cause="extraction", items=30, gained=0, lost=30, points=-10.0),
            CauseMove(cause="prompt", items=10, gained=4, lost=6, points=-2 / 3)])])
    paper = waterfall.PaperNumber(model="LLaVA-1.5", value=24.7, column="pair accuracy",
                                  citation="the paper")
    found = waterfall.explain("mmvp", "m", paper, sent, "lmms-eval", "corrected", summary,
                              waterfall.Transport(variant="max-side:448", what="smaller"),
                              seen)
    steps = {s.name.split(" (")[0].split(":")[0]: s for s in found.steps}
    assert steps["unexplained"].points == pytest.approx(30.0 - 24.7)
    assert steps["unexplained"].note == "beyond sampling noise"  # 24.7 < 30 - 4
    assert steps["image transport"].points == pytest.approx(10.0)
    # two independent half-widths, 4 and 5, in quadrature
    assert steps["image transport"].interval == pytest.approx((10 - 41 ** 0.5, 10 + 41 ** 0.5))
    assert steps["protocol"].points == pytest.approx(-9.0)
    parts = [s for s in found.steps if s.kind == "part"]
    assert [p.name for p in parts] == ["extraction", "prompt", waterfall.AGGREGATION_REST]
    assert sum(p.points or 0 for p in parts) == pytest.approx(-9.0)
    # 30 of 300 items lost: mean -0.1, variance 0.1 - 0.01
    half = 100 * waterfall.Z95 * (0.09 / 300) ** 0.5
    assert parts[0].interval == pytest.approx((-10 - half, -10 + half))
    assert steps["label corrections"].points == pytest.approx(1.0)
    assert "\u2020" in waterfall.rows(found)[2][2]  # no units: as if independent, marked
    total = paper.value + sum(s.points or 0 for s in found.steps if s.kind == "step")
    assert total == pytest.approx(found.yours) == pytest.approx(32.0)
    chart = waterfall.chart(found)
    assert [s.total for s in chart.steps] == [True, False, False, False, False, True]
    assert chart.steps[-2].after == pytest.approx(32.0)


def test_a_missing_headline_is_one_line_naming_what_the_run_has():
    sent = GapHeadlines("pair_accuracy", "paper", [headline("paper", "original", 40.0)])
    paper = waterfall.PaperNumber(model="x", value=1.0, column="c", citation="c")
    with pytest.raises(ValueError, match=r"no score under lmms-eval's rules on the "
                                         r"original labels \(it has: paper \(original\)\)"):
        waterfall.explain("mmvp", "m", paper, sent, "lmms-eval", "original")
    found = waterfall.explain("mmvp", "m", paper, sent, "paper", "original")
    assert [s.kind for s in found.steps] == ["paper", "step", "noise", "yours"]
    assert "image transport: not measured" in found.notes[0]


@pytest.mark.slow
def test_explain_command_on_a_random_mmvp_run(tmp_path):
    write_synthetic(tmp_path / "d", 40)
    out = tmp_path / "run"
    result = invoke("mmvp", "--backend", "builtin", "--model", "random", "--data-dir",
                    tmp_path / "d", "--out", out, "--no-progress", "--variant", "max-side:64")
    assert result.exit_code == 0, result.output
    explained = invoke("explain", out, "--paper-model", "llava 1.5", "--as", "lmms-eval")
    assert explained.exit_code == 0, explained.output
    text = explained.output
    assert max(len(line) for line in text.splitlines()) <= 100
    said = flat(text)
    assert "From the paper's number to yours: mmvp, LLaVA-1.5 -> random" in said
    assert "the paper: LLaVA-1.5 24.7 MMVP pair accuracy" in said
    for step in ("unexplained", "image transport", "protocol: lmms-eval", "· prompt",
                 "sampling noise"):
        assert step in said, step
    stored = json.loads((out / "explanation.json").read_text())["explanations"]
    assert [e["protocol"] for e in stored] == ["lmms-eval"]
    names = [s["name"] for s in stored[0]["steps"]]
    assert names[:4] == ["the paper: LLaVA-1.5", "unexplained (model, decoding, data)",
                         "image transport (as sent vs max-side:64)", "protocol: lmms-eval"]
    page = (out / "report.html").read_text()
    assert "Why your number differs from the paper" in page and "<svg" in page
    # what a run does not have is one line, exit 2
    for args, said in ((("--as", "nope"), "--as nope: the run scored paper, lmms-eval, "
                        "vlmevalkit"),
                       (("--paper-model", "no such model"), "matches no model published"),
                       (("--transport", "jpeg:10", "--paper-value", "30"),
                        "--transport jpeg:10: the run has no such variant (it has: "
                        "max-side:64)")):
        refused = invoke("explain", out, *args)
        assert refused.exit_code == 2 and said in flat(refused.output), refused.output


def test_a_benchmark_without_the_protocols_side_by_side_is_refused(illusion_data, tmp_path):
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random", "--out",
                    out, "--no-progress", "--data-dir", illusion_data)
    assert result.exit_code == 0, result.output
    refused = invoke("explain", out)
    said = flat(refused.output)
    assert refused.exit_code == 2 and "visioneval explain reads runs of" in said
    assert "mmvp" in said and "illusionbench is not one" in said


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("explain_recovery", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_each_known_cause_is_recovered_through_the_loopback_server(script, tmp_path):
    labels = script.write_data(tmp_path / "data", 100)  # holds the swapped labels 99 and 100
    # without the resolution probe here (9 s of 2,048-px canaries resized by the server);
    # the script runs it and says what it found beside the transport step
    explanation = script.run_once(tmp_path / "data", labels, 1, tmp_path / "run", probe=False)
    found = script.found_steps(explanation)
    truth = script.realised(script.Draws.make(1, labels))
    design = script.designed(labels)
    for name in script.STEPS:
        assert found[name].points == pytest.approx(truth[name], abs=1e-9), name
        if name in design:
            low, high = found[name].interval
            assert low <= design[name] <= high, (name, design[name], found[name])
    assert explanation.notes[0].startswith("image transport: max-side:448: an image whose")
    # MMVP gives each pair's part of pair accuracy: the steps between two numbers are paired
    assert {s.name.split(" (")[0].split(":")[0]: s.paired for s in explanation.steps
            if s.kind == "step"} == {"unexplained": False, "image transport": True,
                                     "protocol": True}


def test_which_variant_shows_the_model_what_the_papers_model_saw():
    advice = waterfall.transport_advice
    # through an endpoint that halves images, 336 px need max-side:672
    assert advice(336, 2.0, None).endswith("--variant max-side:672 shows your model the same "
                                           "through your endpoint, which reduces images "
                                           "2.00x (the probe)")
    assert advice(336, 2.0, "max-side:672").startswith(
        "the paper's model saw 336 px on the long side: max-side:672 shows")
    assert advice(336, 2.0, "max-side:336").endswith("(max-side:336 does not)")
    assert "if your endpoint keeps their size (--probe-resolution" in advice(336, None, None)
    assert advice(224, 1.0, "max-side:224").endswith("which keeps their size (the probe)")
    assert advice(224, 1.0, "jpeg:50").endswith("(jpeg:50 does not)")
