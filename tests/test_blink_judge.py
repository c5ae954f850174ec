"""BLINK's opt-in judge step: the paper's and VLMEvalKit's matching prompts as each reference
builds them, and the command against two loopback servers (the model, and a scripted judge)
over real HTTP: the judge is asked only about answers the rules leave, its verdicts sit beside
the rule-based ones, and a judge that fails leaves errors, never wrong answers."""

from __future__ import annotations

import base64
import hashlib
import re

import pyarrow.parquet as pq
import pytest
from cli_helpers import flat, invoke, journal, load

from visioneval.benchmarks.blink.judging import paper_prompt, vlmevalkit_prompt
from visioneval.benchmarks.blink.options import BlinkOptions
from visioneval.benchmarks.blink.questions import Question
from visioneval.benchmarks.blink.synth import write_synthetic
from visioneval.loopback.server import Prompt

Q = Question("val_Jigsaw_1", "Jigsaw", "Which fits", ("left", "right"), "(A)", "")
TASKS = "Counting,IQ_Test,Relative_Depth"


def test_the_paper_prompt_follows_its_multiple_choice_py():
    text = paper_prompt(Q, "Maybe the left one")
    # eval/multiple_choice.py lines 24-26: the pieces joined without a space
    assert "etc., output (Z)If the meaning" in text and "output (Z)Your should" in text
    # test_benchmark.py lines 32-34 fill example 4; the template adds the "?"
    assert text.endswith("Example 4: \nQuestion: Which fits\nSelect from the following "
                         "choices?\nOptions: (A) left\n(B) right\n(Z) Failed\n"
                         "Answer: Maybe the left one\nYour output: ")
    assert "Options: (A) Point A\n(B) Point B\n(Z) Failed\nAnswer: Point B" in text


def test_vlmevalkits_prompt_follows_build_prompt_blink_and_build_option_str():
    text = vlmevalkit_prompt(Q, "Maybe the left one")
    # multiple_choice.py lines 276-279 and vlm.py lines 174-179 (build_option_str)
    assert "etc., output Z.If the meaning" in text and "A, B, C, D (if they are valid" in text
    assert "Options: A. Point A\nB. Point B\n(Z) Failed\nAnswer: Point B" in text
    assert text.endswith("Question: Which fits?\nOptions: There are several options: \n"
                         "A. left\nB. right\n\n(Z) Failed\nAnswer: Maybe the left one\n"
                         "Your output: ")


def test_a_judge_needs_a_backend_and_a_model():
    with pytest.raises(ValueError, match="--judge-backend and --judge-model"):
        BlinkOptions(judge_model="gpt-4o-mini")


def model(truth: dict[str, str]):
    """Counting: "It must be (X)." (the paper's rule: "(X)." is no token; VLMEvalKit reads X);
    IQ_Test: "Hard to say." (neither reads it); Relative_Depth: the right option's text in a
    long sentence (neither reads it: too long for VLMEvalKit's text match)."""
    def answer(prompt: Prompt) -> str:
        letter = truth[hashlib.sha256(base64.b64decode(prompt.images[0])).hexdigest()]
        if "counting" in prompt.text:
            return f"It must be ({letter})."
        if "iq test" in prompt.text:
            return "Hard to say."
        choice = ["the first one", "the second one"]["AB".index(letter)]
        return f"I would say {choice}, clearly, as the picture shows: it is nearer the camera"
    return answer


def judge(prompt: Prompt) -> str:
    """Reads the answer after the last "Answer: ": a bracketed letter, else an option's text;
    replies "(B)" to the paper's prompt, "B" to VLMEvalKit's, Z when nothing fits."""
    answer = prompt.text.rsplit("Answer: ", 1)[1]
    found = re.search(r"\(([A-D])\)", answer)
    letter = found.group(1) if found else next(
        (x for x, t in zip("AB", ("the first one", "the second one"), strict=True)
         if t in answer), "Z")
    return f"({letter})" if "Select from the following choices?" in prompt.text else letter


@pytest.fixture
def data(tmp_path):
    write_synthetic(tmp_path / "d", 14)
    truth = {}
    for path in (tmp_path / "d").rglob("*.parquet"):
        for row in pq.read_table(path).to_pylist():
            truth[hashlib.sha256(row["image_1"]["bytes"]).hexdigest()] = row["answer"][1]
    return tmp_path / "d", truth


def run(serve, data, tmp_path, **judge_script):
    folder, truth = data
    server, judged = serve(answer=model(truth)), serve(**judge_script)
    out = tmp_path / "run"
    result = invoke("blink", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", folder, "--out", out, "--no-progress",
                    "--tasks", TASKS, "--max-attempts", "1", "--judge-backend", "openai",
                    "--judge-model", "m", "--judge-base-url", judged.base_url + "/v1")
    return result, out, server, judged


def test_the_judge_reads_what_the_rules_leave_beside_the_rule_based_reading(
        serve, data, tmp_path):
    result, out, server, judged = run(serve, data, tmp_path, answer=judge)
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 3 * 3
    # the paper's rule reads none of the three; VLMEvalKit's reads Counting's "(X)."
    assert judged.stats.requests == 3 + 2
    protocols = load(out)["protocols"]
    assert protocols["paper"]["original"]["micro"] == 0.0
    assert protocols["paper+judge"]["original"]["micro"] == pytest.approx(2 / 3)
    assert protocols["paper+judge"]["judge"] == {"asked": 3, "read": 2, "no_option": 1,
                                                 "random": 0, "failed": 0}
    assert protocols["vlmevalkit"]["original"]["micro"] == pytest.approx(1 / 3)
    assert protocols["vlmevalkit+judge"]["original"]["micro"] == pytest.approx(2 / 3)
    assert protocols["vlmevalkit+judge"]["judge"]["asked"] == 2
    assert protocols["vlmevalkit+judge"]["unparsed"] == {
        "Z: the judge matched no option (scored wrong)": 1}
    records = {r["id"]: r for r in journal(out)}
    counting = records["val_Counting_1/vlmevalkit"]["parsed"]
    assert "vlmevalkit+judge reading" not in counting  # read by rule: the judge not asked
    assert counting["vlmevalkit+judge"] == counting["vlmevalkit"]
    printed = flat(result.output)
    assert "paper+judge read by analyze_answer's rules, then the paper's matching prompt " \
           "asked of m" in printed
    assert all(len(x) <= 100 for x in result.output.splitlines())


def test_a_failed_judge_request_is_an_error_under_the_judged_reading_only(
        serve, data, tmp_path):
    result, out, _, judged = run(serve, data, tmp_path, answer=judge, fail_first=100,
                                 faults=("500",))
    assert result.exit_code == 0, result.output
    assert judged.stats.faults == 5
    protocols = load(out)["protocols"]
    paper = protocols["paper+judge"]["original"]
    assert (paper["n"], paper["n_errors"]) == (0, 3) and "micro" not in paper
    mine = protocols["vlmevalkit+judge"]
    assert (mine["original"]["n"], mine["original"]["n_errors"]) == (1, 2)
    assert mine["judge"]["failed"] == 2 and mine["unparsed"] == {}
    # the rule-based readings are untouched
    assert protocols["vlmevalkit"]["original"]["micro"] == pytest.approx(1 / 3)
    assert protocols["paper"]["original"]["n"] == 3
