"""vqa's judge scorer over real HTTP: the model under test and a rubric judge are two
loopback servers; the judge sees the image, the question, the reference and the answer;
its verdict decides "correct"; a judge that cannot give one makes the sample an error
(never a wrong answer), and a resume asks the judge again with the answer from the cache."""

from __future__ import annotations

import json
import re

import pytest
from cli_helpers import journal, load
from test_vqa_run import EXAMPLE, FAST, given, output

from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.vqa.options import VqaOptions
from visioneval.commands.resume import resume
from visioneval.commands.run import run
from visioneval.core import registry
from visioneval.core.records import GenerationSettings
from visioneval.runs.request import ResumeRequest
from visioneval.runs.spec import RunSpec

SCORES = re.compile(r'"(\w+)": <0-10>')


def strict_judge(seen: list):
    """Full marks when the candidate answer names the reference's letter, else zero."""
    def answer(prompt) -> str:
        seen.append(prompt)
        reference = re.search(r"Reference answer:\n(.*)\n", prompt.text).group(1)
        candidate = re.search(r"``` CANDIDATE\n(.*?)\n```", prompt.text, re.S).group(1)
        mark = 10 if candidate.strip() == reference.split(".")[0] else 0
        return json.dumps({"reasoning": "compared", "details": {},
                           "scores": {k: mark for k in SCORES.findall(prompt.text)}})
    return answer


def options(judge_url: str, **extra) -> dict:
    return {"data": str(EXAMPLE / "questions.jsonl"), "scorer": "judge",
            "group_col": "category", "judge_backend": "openai", "judge_model": "m",
            "judge_base_url": judge_url, **extra}


def go(model_server, opts: dict, out, engine=FAST) -> int:
    spec = BackendSpec(kind="openai", model="m", base_url=model_server.base_url + "/v1")
    return run(RunSpec.of(registry.build("vqa", opts), backend=spec,
                          generation=GenerationSettings(), engine=engine, out=out),
               output())


def test_the_judge_grades_each_answer_against_the_reference_seeing_the_image(serve,
                                                                            tmp_path):
    model = serve(answer=lambda prompt: "B")
    seen: list = []
    judge = serve(answer=strict_judge(seen))
    out = tmp_path / "run"
    assert go(model, options(judge.base_url + "/v1"), out) == 0
    metrics = load(out)
    # Three of the twelve example answers are B (as the choice scorer's tests know).
    assert metrics["overall"]["accuracy"] == 0.25 and metrics["overall"]["n"] == 12
    assert len(seen) == 12 and all(len(p.images) == 1 for p in seen)
    assert any("Reference answer:\nB. red" in p.text for p in seen)
    records = journal(out)
    passed = [r for r in records if r["scores"]["judge"]["correct"] == 1.0]
    assert {r["target"] for r in passed} == {"B"} and len(passed) == 3
    assert passed[0]["parsed"]["judge"] == "score 1.00, pass"
    assert passed[0]["response"]["text"] == "B"  # the model's answer, not the judge's
    assert load(out, "run.json")["sessions"][-1]["judge_requests"] == 12


def test_a_judge_without_a_verdict_is_an_error_and_resume_asks_it_again(serve, tmp_path):
    asked: list = []
    model = serve(answer=lambda prompt: asked.append(prompt) or "B")
    # One judge checkpoint (the same weights after a fix): a resume may not change models.
    mute = serve(answer=lambda prompt: "no idea", checkpoint="judge-v1")
    out = tmp_path / "run"
    cached = FAST.model_copy(update={"cache_path": tmp_path / "cache"})
    assert go(model, options(mute.base_url + "/v1"), out, cached) == 1
    records = journal(out)
    assert all(r["response"]["error"].startswith("judge: no verdict") for r in records)
    assert all(r["parsed"]["answer"] == "B" for r in records)
    assert load(out)["overall"]["n_errors"] == 12  # never scored as wrong answers
    assert len(asked) == 12
    # Resumed against a judge that answers: the judge is asked again, the model is not (its
    # answers come from the cache; a judge reply that is no verdict was never cached).
    seen: list = []
    good = serve(answer=strict_judge(seen), checkpoint="judge-v1")
    info = json.loads((out / "run.json").read_text())
    info["options"]["judge_base_url"] = good.base_url + "/v1"
    (out / "run.json").write_text(json.dumps(info))
    assert resume(ResumeRequest(out, "vqa", given(model, judge_base_url=good.base_url + "/v1")),
                  output()) == 0
    assert load(out)["overall"]["accuracy"] == 0.25 and len(seen) == 12
    assert len(asked) == 12


@pytest.mark.parametrize(("extra", "message"), [
    ({"judge_model": None}, "--scorer judge needs --judge-backend and --judge-model"),
    ({"judge_base_url": "http://user:pw@127.0.0.1:1/v1"}, "holds credentials"),
])
def test_judge_options_are_checked(extra, message):
    with pytest.raises(ValueError, match=message):
        VqaOptions.model_validate(options("http://127.0.0.1:1/v1", **extra))
    with pytest.raises(ValueError, match="is for --scorer judge"):
        VqaOptions.model_validate({"data": "x", "judge_model": "m"})
