"""HallusionBench's opt-in judge steps over real HTTP: the paper's grader (the teacher
prompt against the detailed answer, tianyi-lab/HallusionBench utils.py:33-64) read by the
paper's and lmms-eval's protocols, VLMEvalKit's Yes/No matcher (yorn.py:235-272) asked only
for answers its rule reads as Unknown, each on its own model, priced and counted under its
own role; a grader that fails makes the sample an error, never a wrong answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import invoke, journal, load

from visioneval.benchmarks.hallusionbench import rules
from visioneval.benchmarks.hallusionbench.synth import write_synthetic
from visioneval.loopback.server import Reply

TEACHER = "Imagine you are an intelligent teacher."
MATCHER = "You are an AI assistant who will help me to match an answer"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hallusion-judge")
    write_synthetic(root, 24, seed=4)
    return root


def model_or_judge(seen: dict):
    """The model agrees in words on even questions ("I agree": no Yes/No word), says No on
    odd ones and does not know without a figure; the grader says correct to an agreement
    with a "Yes" reference, unclear to not knowing, else incorrect; the matcher says Yes."""
    def answer(prompt) -> str:
        text = prompt.text
        if text.startswith(TEACHER):
            seen.setdefault("grader", []).append(text)
            reference = re.search(r"Reference answer: (\w+)", text)[1]
            prediction = text.split("Prediction answer:", 1)[1]
            if "do not know" in prediction:
                return "unclear"
            agrees = prediction.startswith("I agree") == (reference == "Yes")
            return "correct" if agrees else "incorrect"
        if text.startswith(MATCHER):
            seen.setdefault("matcher", []).append(text)
            return "Yes"
        if not prompt.images:
            return "I do not know."
        q = int(re.search(r"mark (\d+)", text)[1])
        return "I agree, it is larger." if q % 2 == 0 else "No."
    return answer


def _question(record: dict) -> str:
    return next(p for p in record["prompt"][-1]["parts"] if isinstance(p, str))


def args(server, data: Path, out: Path, *extra) -> list:
    url = server.base_url + "/v1"
    return ["hallusionbench", "--backend", "openai", "--base-url", url, "--model", "m",
            "--data-dir", data, "--out", out, "--no-progress", "--backoff-base", "0.01",
            "--backoff-cap", "0.05", "--judge-backend", "openai", "--judge-base-url", url,
            "--judge-model", "grader", "--vlmevalkit-judge-model", "matcher",
            "--price-in", "0", "--price-out", "0", *extra]


def test_the_grader_and_the_matcher_read_the_answers(serve, data, tmp_path):
    seen: dict = {}
    server = serve(models=("m", "grader", "matcher"), answer=model_or_judge(seen))
    out = tmp_path / "run"
    result = invoke(*args(server, data, out))
    assert result.exit_code == 0, result.output
    records = journal(out)
    with_figure = [r for r in records if r["metadata"]["visual_input"] != "0"]
    agreeing = [r for r in with_figure if int(r["metadata"]["question_id"]) % 2 == 0]
    # A grader prompt per answer (built from the question, the detailed answer and the
    # answer; one sent twice at once may reach the server twice); the matcher's only for
    # answers VLMEvalKit's rule reads as Unknown.
    prompts = {rules.judge_prompt(_question(r), r["target"]["gt_answer_details"],
                                  r["response"]["text"]) for r in records}
    assert set(seen["grader"]) == prompts and len(seen["grader"]) <= len(records)
    assert set(seen["matcher"]) == {rules.match_prompt(_question(r), r["response"]["text"])
                                    for r in agreeing}
    for r in records:
        yes = r["metadata"]["gt_answer"] == "1"
        said = r["response"]["text"]
        if "do not know" in said:  # unclear: right only for a VS question with no figure
            want = r["metadata"]["category"] == "VS" and r["metadata"]["figure_id"] == "0"
            assert r["parsed"]["paper"] == "unclear"
        else:
            want = said.startswith("I agree") == yes
        assert r["scores"]["paper"]["correct"] == float(want), r["id"]
        if r in with_figure:
            assert r["scores"]["lmms-eval"]["correct"] == float(want)
            vlm = "Yes" if said.startswith("I agree") else "No"  # the matcher's Yes
            assert r["parsed"]["vlmevalkit"] == vlm
            assert r["scores"]["vlmevalkit"]["correct"] == float((vlm == "Yes") == yes)
    metrics = load(out)
    assert metrics["protocols"]["paper"]["reading"] == "judge"
    notes = [n["cause"] for n in metrics["differences"]["notes"]]
    assert "label set" in notes
    info = load(out, "run.json")
    session = info["sessions"][-1]
    assert set(session["usage"]) == {"model", "judge", "panel1"}  # each priced on its own
    assert session["judge_identity"]["model"] == "grader"
    assert session["panel_identities"][0]["model"] == "matcher"


def test_a_grader_without_a_verdict_makes_an_error_not_a_wrong_answer(serve, data, tmp_path):
    model = serve(answer=model_or_judge({}))
    empty = {"id": "x", "object": "chat.completion", "model": "grader", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": ""},
         "finish_reason": "stop"}]}
    grader = serve(models=("grader",), reply=lambda protocol, body, prompt: Reply(empty))
    out = tmp_path / "run"
    result = invoke("hallusionbench", "--backend", "openai", "--base-url",
                    model.base_url + "/v1", "--model", "m", "--data-dir", data, "--out", out,
                    "--no-progress", "--judge-backend", "openai", "--judge-base-url",
                    grader.base_url + "/v1", "--judge-model", "grader")
    assert result.exit_code == 1, result.output
    records = journal(out)
    assert records and all(r["response"]["error"].startswith("judge: the grader replied "
                                                             "nothing") for r in records)
    assert all(r["parsed"]["answer"] == r["parsed"]["answer"].strip() for r in records)
    paper = load(out)["protocols"]["paper"]
    assert paper["n_errors"] == len(records) and paper["n"] == 0 and "aAcc" not in \
        paper["overall"]


def test_the_dry_run_prices_the_grader_and_says_the_matcher_is_not_estimated(data):
    result = invoke("hallusionbench", "--backend", "openai", "--model", "gpt-4o",
                    "--judge-backend", "openai", "--judge-model", "gpt-4",
                    "--vlmevalkit-judge-model", "gpt-4o-mini", "--data-dir", data, "--dry-run")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "judge requests at least 24 (one per answer) to openai gpt-4" in out
    assert "panel model 1, openai gpt-4o-mini at api.openai.com, answers no sample of its " \
        "own" in out
