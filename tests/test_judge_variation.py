"""A judge asked N times per case (`visioneval evaluate --judge-samples N`): the split of its
mean score's variance into the cases and its own call-to-call variation. The loopback's
`judge-varies` moves every verdict by a known amount (variance 0.02 of the 0-1 score about
each case's level), drawn by the request's seed, so the within estimate has a known value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke, load

from visioneval.core.records import GenerationSettings
from visioneval.evaluators.judge import Case, judge_request, parse_reply
from visioneval.evaluators.rubric import load_rubric
from visioneval.evaluators.variation import ONE_SAMPLE, judge_variation
from visioneval.loopback.judges import VARIES_WITHIN, judge_varies
from visioneval.loopback.server import ANSWER_MODES, Prompt
from visioneval.terminal import WIDTH

EVALUATOR = "judge:image-description"


def _cases(folder: Path, n: int) -> Path:
    """`n` cases without images, each answer its own (so each case its own level)."""
    folder.mkdir()
    cases = [{"id": f"case-{i:02d}", "input": "Describe the image.",
              "output": f"Answer number {i}: {i % 7} cups on a table.",
              "evaluators": [{"judge": "image-description"}]} for i in range(n)]
    path = folder / "cases.yaml"
    path.write_text(yaml.safe_dump({"cases": cases}))
    return path


def _evaluate(server, cases: Path, out: Path, samples: int):
    result = invoke("evaluate", cases, "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", server.base_url + "/v1", "--judge-samples", samples,
                    "--out", out, "--no-progress", "--no-cache")
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.slow
def test_the_within_estimate_recovers_the_judges_known_variation(serve, tmp_path):
    server = serve(answer=ANSWER_MODES["judge-varies"])
    cases = _cases(tmp_path / "cases", 40)
    result = _evaluate(server, cases, tmp_path / "four", 4)
    block = load(tmp_path / "four")["evaluators"][EVALUATOR]
    found = block["judge_variation"]
    assert (found["cases"], found["left_out"], found["samples_per_case"]) == (40, 0, 4)
    within = found["within"]
    assert within["value"] == pytest.approx(VARIES_WITHIN, rel=0.25)
    assert within["ci95"][0] < VARIES_WITHIN < within["ci95"][1]
    # The levels 3-7 over 40 cases: a between variance near 0.02, so with 4 samples a case
    # the judge's share is near 0.02 / 4 / (0.02 + 0.02 / 4) = 20% and 9 samples bring it
    # under 10%.
    assert 0.01 < found["between"]["value"] < 0.03
    assert 0.1 < found["within_share"]["value"] < 0.35
    assert 5 <= found["samples_for_target"] <= 15
    assert found["mean_score"] == pytest.approx(block["mean_score"])
    card, = load(tmp_path / "four")["judges"]["cards"]
    assert card["evaluators"][EVALUATOR]["judge_variation"] == found
    # The terminal says it in two lines within the width; the page has the table.
    said = [line for line in result.output.splitlines() if "call-to-call" in line]
    share = round(100 * found["within_share"]["value"])
    assert said == [f"{EVALUATOR}: judge call-to-call variation: {share}% "
                    f"({round(100 * found['within_share']['ci95'][0])}-"
                    f"{round(100 * found['within_share']['ci95'][1])}%) of the variance,"]
    follow = result.output.splitlines()[result.output.splitlines().index(said[0]) + 1]
    assert follow == (f"  over 40 cases x 4 samples; {found['samples_for_target']} samples "
                      "a case would bring it under 10%")
    # Under 100 cases its intervals were measured too short: the third line says so.
    after = result.output.splitlines()[result.output.splitlines().index(said[0]) + 2]
    assert after == "  its intervals are rough: under 100 cases they covered 77-93% " \
        "(docs/judge-checks.md)"
    assert all(len(line) <= WIDTH for line in result.output.splitlines())
    page = (tmp_path / "four" / "report.html").read_text()
    assert "call-to-call share" in page and "Adding error bars to evals" in page

    # Asked once per case: no split, and the reason, never a 0.
    _evaluate(server, cases, tmp_path / "one", 1)
    once = load(tmp_path / "one")["evaluators"][EVALUATOR]
    assert "judge_variation" not in once
    assert once["judge_variation_unavailable"] == ONE_SAMPLE
    assert "call-to-call" not in invoke("show", tmp_path / "one").output


def test_two_cases_are_needed_and_a_case_with_one_verdict_is_left_out(serve, tmp_path):
    """One case of two has a single usable verdict: left out, counted, and the split is
    absent with the reason (in metrics.json and in the terminal)."""

    def answer(prompt):  # the second case's second sample never parses, even repaired
        if "Answer number 1" in prompt.text and prompt.seed == 1:
            return "I would rather not."
        return judge_varies(prompt)

    server = serve(answer=answer)
    result = _evaluate(server, _cases(tmp_path / "cases", 2), tmp_path / "run", 2)
    block = load(tmp_path / "run")["evaluators"][EVALUATOR]
    assert block["processed"] == 2 and "judge_variation" not in block
    reason = "1 case with two usable verdicts or more (2 are needed), 1 with fewer left out"
    assert block["judge_variation_unavailable"] == reason
    lines = result.output.splitlines()
    said = lines.index(f"{EVALUATOR}: judge call-to-call variation not measured:")
    assert lines[said + 1] == f"  {reason}"


def test_the_split_of_verdict_scores_directly():
    """Cases with one verdict are left out and counted; scores that never vary give a
    reason, not a share of 0/0; one sample per case gives no split at all."""
    found, reason = judge_variation([[0.2, 0.4], [0.6, 0.8, 0.7], [0.5]], samples=3)
    assert reason is None and found is not None
    assert (found.cases, found.left_out) == (2, 1)
    assert found.samples_per_case == 2.5
    assert found.within.value == pytest.approx((0.02 + 0.01) / 2)
    assert found.mean_score == pytest.approx((0.3 + 0.7) / 2)
    assert judge_variation([[0.5, 0.5], [0.5, 0.5]], samples=2) == (None, (
        "neither the 2 cases' scores nor their verdicts vary: every verdict gave the same "
        "score"))
    assert judge_variation([[0.5, 0.6], [0.1, 0.9]], samples=1) == (None, ONE_SAMPLE)
    json.dumps(found.model_dump())  # finite numbers only


def test_the_loopback_judge_varies_by_the_requests_seed():
    """Each seed its own offset, the same seed the same verdict; over many seeds the
    weighted score's variance is the known 0.02."""

    rubric = load_rubric("image-description")
    request = judge_request(rubric, Case("Describe it.", "Two cups."), GenerationSettings())
    text = "\n".join(str(p) for m in request.messages for p in m.parts if isinstance(p, str))

    def score(seed: int | None) -> float:
        return rubric.weighted(parse_reply(judge_varies(Prompt(text, [], seed)), rubric)
                               ["scores"])

    assert score(3) == score(3)
    found = [score(seed) for seed in range(4000)]
    assert len(set(found)) == 5
    mean = sum(found) / len(found)
    assert sum((s - mean) ** 2 for s in found) / len(found) == \
        pytest.approx(VARIES_WITHIN, rel=0.1)


def test_with_several_judges_each_card_has_its_own_split(serve, tmp_path):
    servers = [serve(answer=ANSWER_MODES["judge-varies"]) for _ in range(2)]
    cases = _cases(tmp_path / "cases", 4)
    args = ["--judge-backend", "openai"]
    for server in servers:
        args += ["--judge-model", "m", "--judge-base-url", server.base_url + "/v1"]
    result = invoke("evaluate", cases, *args, "--judge-samples", 2, "--out", tmp_path / "run",
                    "--no-progress", "--no-cache")
    assert result.exit_code == 0, result.output
    metrics = load(tmp_path / "run")
    block = metrics["evaluators"][EVALUATOR]
    assert "judge_variation" not in block
    assert block["judge_variation_unavailable"].startswith("2 judges: this score is the panel's")
    for card in metrics["judges"]["cards"]:
        assert card["evaluators"][EVALUATOR]["judge_variation"]["cases"] == 4
    lines = result.output.splitlines()
    for judge in (1, 2):
        assert any(line.startswith(f"judge {judge}: m, {EVALUATOR}: judge call-to-call "
                                   "variation: ") for line in lines)
    page = (tmp_path / "run" / "report.html").read_text()
    assert page.count("(--judge-samples N) gives each case N scores") == 2  # a table a judge
