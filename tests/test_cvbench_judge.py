"""CV-Bench's opt-in judge step (VLMEvalKit's): its matching prompt as `build_prompt` and
`build_option_str` make it, and the command against two loopback servers over real HTTP (the
model, and a scripted judge): the judge is asked only about answers VLMEvalKit's rules leave,
its reading sits beside the rule-based one, and a judge that fails leaves errors."""

from __future__ import annotations

import random

import pyarrow.parquet as pq
import pytest
from cli_helpers import flat, invoke, journal, load

from visioneval.benchmarks.cvbench.judging import matching_prompt
from visioneval.benchmarks.cvbench.options import CvBenchOptions
from visioneval.benchmarks.cvbench.synth import write_synthetic
from visioneval.loopback.server import Prompt

ITEMS = 6  # an ADE20K, a COCO and an Omni3D image, two items each


def test_the_matching_prompt_follows_build_prompt():
    text = matching_prompt("How many chairs are in the image?", ["1", "2"], "two, I think")
    # multiple_choice.py lines 231-239; build_option_str, vlmeval/smp/vlm.py lines 174-179
    assert "Your should output a single uppercase character in A, B, C, D" in text
    assert text.endswith("Example 3: \nQuestion: How many chairs are in the image??\n"
                         "Options: There are several options: \nA. 1\nB. 2\n\n"
                         "Answer: two, I think\nYour output: ")


def test_the_judge_reads_vlmevalkits_answers_only():
    with pytest.raises(ValueError, match="judge reads VLMEvalKit's answers"):
        CvBenchOptions(protocol="paper", judge_backend="openai", judge_model="m")


def model(prompt: Prompt) -> str:
    """Count: "(A)", which VLMEvalKit's rules read; Relation: a long sentence naming "right";
    Depth: "Hard to say."; Distance: "I cannot tell." (none of these three read by rule)."""
    text = prompt.text
    if text.startswith("How many"):
        return "(A)"
    if text.startswith("Where is"):
        return "It is to the right of it, judging from where both appear in the picture."
    return "Hard to say." if "to the camera" in text else "I cannot tell."


def judge(prompt: Prompt) -> str:
    """B for an answer naming "right", Z for "Hard to say", otherwise no letter at all."""
    answer = prompt.text.rsplit("Answer: ", 1)[1]
    if "right" in answer:
        return "B"
    return "Z" if "Hard to say" in answer else "I am not sure."


@pytest.fixture
def data(tmp_path):
    write_synthetic(tmp_path / "d", ITEMS, seed=2)
    rows = pq.read_table(tmp_path / "d" / "test.parquet").to_pylist()
    return tmp_path / "d", {r["idx"]: (r["task"], r["answer"][1]) for r in rows}


def run(serve, folder, tmp_path, **judge_script):
    server, judged = serve(answer=model), serve(**judge_script)
    out = tmp_path / "run"
    result = invoke("cvbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", folder, "--out", out, "--no-progress",
                    "--protocol", "vlmevalkit", "--labels", "original", "--max-attempts",
                    "1", "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", judged.base_url + "/v1")
    return result, out, judged


def test_the_judge_reads_what_vlmevalkits_rules_leave(serve, data, tmp_path):
    folder, gold = data
    result, out, judged = run(serve, folder, tmp_path, answer=judge)
    assert result.exit_code == 0, result.output
    # Relation's two answers: one reply each; Depth: one (Z); Distance: three unreadable
    assert judged.stats.requests == 2 + 1 + 3
    metrics = load(out)
    assert metrics["judge"] == {"model": "m", "reading": "vlmevalkit+judge", "asked": 4,
                                "read": 2, "no_option": 1, "random": 1, "failed": 0}
    # expected verdicts: the rule reads Count's A; the judge Relation's B; Depth Z (wrong);
    # Distance VLMEvalKit's random pick among A, B and Z (multiple_choice.py lines 403-405)
    pick = {i: random.Random(f"vlmevalkit/{i}").choice("ABZ") for i in gold}
    expected = {"Count": lambda i: gold[i][1] == "A", "Relation": lambda i: gold[i][1] == "B",
                "Depth": lambda i: False, "Distance": lambda i: pick[i] == gold[i][1]}
    right = [expected[task](i) for i, (task, _) in gold.items()]
    results = metrics["results"]["original"]
    assert results["vlmevalkit+judge"]["accuracy"] == pytest.approx(sum(right) / ITEMS)
    rule = [task == "Count" and letter == "A" for task, letter in gold.values()]
    assert results["vlmevalkit"]["accuracy"] == pytest.approx(sum(rule) / ITEMS)
    assert results["vlmevalkit"]["unparsed"] == 4 and results["vlmevalkit+judge"]["unparsed"] == 1
    records = {r["id"]: r for r in journal(out)}
    assert "vlmevalkit+judge reading" not in records["0/vlmevalkit"]["parsed"]  # Count
    assert "vlmevalkit+judge: VLMEvalKit's rules, then its matching prompt asked of m" in \
        flat(result.output)
    csv_rows = (out / "results.csv").read_text()
    assert "vlmevalkit+judge" in csv_rows


def test_a_failed_judge_request_is_an_error_under_the_judged_reading(serve, data, tmp_path):
    folder, gold = data
    result, out, judged = run(serve, folder, tmp_path, answer=judge, fail_first=100,
                              faults=("500",))
    assert result.exit_code == 0, result.output
    assert judged.stats.faults == 4
    metrics = load(out)
    assert metrics["judge"]["failed"] == 4
    judged_block = metrics["results"]["original"]["vlmevalkit+judge"]
    assert (judged_block["n"], judged_block["n_errors"]) == (2, 4)  # the two Count items
    rule = metrics["results"]["original"]["vlmevalkit"]
    assert (rule["n"], rule["n_errors"]) == (ITEMS, 0)  # the rule-based reading untouched
