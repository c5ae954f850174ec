"""`visioneval evaluate` and `visioneval validate` as a user runs them."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
import yaml
from cli_helpers import invoke, journal, load, spawn
from helpers import png_bytes

SCRIPT = """
    import json, sys
    data = json.loads(sys.stdin.read())
    ok = "cat" in data["output"]
    print(json.dumps({"status": "processed", "score": 1.0 if ok else 0.0, "passed": ok,
                      "details": {"seen": data["output"]}}))
"""


def _cases(tmp_path, cases, name="cases.yaml"):
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(c) if isinstance(c, dict) else c for c in cases))
    else:
        path.write_text(yaml.safe_dump(cases))
    return path


def test_validate_command_prints_the_result_and_exits_by_it():
    result = invoke("validate", "count",
                    '{"output": "5 bottles, 3 cans", "expected_output": "5 bottles, 8 cans"}')
    assert result.exit_code == 1 and json.loads(result.stdout)["score"] == 0.5
    assert invoke("validate", "chart", '{"output": "58%", "expected_output": "58%"}'
                  ).exit_code == 0
    unknown = invoke("validate", "colour", "{}")
    assert unknown.exit_code == 2 and json.loads(unknown.stdout)["status"] == "error"


@pytest.mark.slow
def test_validate_reads_stdin_in_a_real_process():
    proc = spawn("validate", "ocr")
    out, _ = proc.communicate('{"output": "Project Proposal Q1 2026", '
                              '"expected_output": "Project Proposal Q1 2026"}', timeout=60)
    assert proc.returncode == 0 and json.loads(out)["score"] == 1.0


def test_validators_only_run_needs_no_judge(tmp_path):
    (tmp_path / "mine.py").write_text(textwrap.dedent(SCRIPT))
    (tmp_path / "a.png").write_bytes(png_bytes())
    cases = _cases(tmp_path, [
        {"id": "bottles", "input": "Count the objects.", "images": ["a.png"],
         "output": "5 bottles and 3 cans", "expected_output": "5 bottles, 8 cans",
         "evaluators": [{"validator": "count"}, {"validator": "count", "threshold": 0.5}]},
        {"id": "chart", "output": "Q4: $2.4M", "expected_output": "$2.4M",
         "evaluators": [{"validator": "chart"},
                        {"script": f"{sys.executable} mine.py"}]},
        {"id": "broken", "output": "x"},  # no evaluators
        {"id": "badimage", "output": "x", "images": ["missing.png"],
         "evaluators": [{"validator": "ocr", "options": {"keywords": ["x"]}}]},
    ])
    out = tmp_path / "run"
    result = invoke("evaluate", cases, "--out", out, "--no-progress", "--allow-scripts")
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    assert any("case broken" in ln and "evaluators" in ln for ln in skipped)
    assert any("case badimage" in ln and "missing.png: no such file" in ln for ln in skipped)
    metrics = load(out)
    assert metrics["evaluators"]["validator:count"] == {
        "n": 1, "processed": 1, "errors": 0, "skipped": 0, "passed": 0, "pass_rate": 0.0,
        "mean_score": 0.5, "score_stdev": 0.0,
        "pass_rate_ci95_unavailable": "1 scored sample: no interval"}
    assert metrics["evaluators"]["validator:count@0.5"]["pass_rate"] == 1.0
    assert metrics["cases"]["chart"]["passed_all"] is False  # the script wants a cat
    script = next(r for r in journal(out) if r["group"].startswith("script:"))
    assert script["parsed"]["result"]["details"] == {"seen": "Q4: $2.4M"}
    assert "validator:chart" in result.stdout and (out / "results.csv").exists()


def test_judges_require_a_judge_model_and_jsonl_cases_work(serve, tmp_path):
    cases = _cases(tmp_path, [
        {"id": "d1", "input": "Describe.", "output": "A cat on a mat.",
         "evaluators": [{"judge": "image-description"}]},
        "{not json",
    ], name="cases.jsonl")
    missing = invoke("evaluate", cases, "--out", tmp_path / "x")
    assert missing.exit_code == 2 and "uses judges: give --judge-backend" in missing.stderr

    reply = json.dumps({"reasoning": "ok", "scores": {
        "visual_accuracy": 9, "completeness": 9, "clarity": 9, "relevance": 9},
        "details": {"hallucinations": [], "missing_elements": []}})
    server = serve(answer=lambda p: reply)
    out = tmp_path / "run"
    result = invoke("evaluate", cases, "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", server.base_url + "/v1", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "line 2: not JSON" in result.stderr
    assert load(out)["evaluators"]["judge:image-description"]["mean_score"] == 0.9
    info = load(out, "run.json")
    assert info["benchmark"] == "evaluate" and info["backend"]["model"] == "m"
    resumed = invoke("evaluate", "--resume", out, "--no-progress", "--judge-base-url",
                     server.base_url + "/v1")
    assert resumed.exit_code == 0 and server.stats.requests == 1  # nothing left to do


@pytest.mark.slow
def test_shipped_example_runs_with_the_scripted_judge(serve, tmp_path):
    from pathlib import Path

    from visioneval.loopback.server import answer_judge

    server = serve(answer=answer_judge)
    example = Path(__file__).parent.parent / "examples" / "evaluators" / "cases.yaml"
    out = tmp_path / "run"
    result = invoke("evaluate", example, "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", server.base_url + "/v1", "--out", out, "--no-progress",
                    "--allow-scripts")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert set(metrics["evaluators"]) == {
        "judge:image-description", "judge:comparison", "judge:structured-output",
        "validator:count",
        "validator:chart", "validator:ocr", "validator:json",
        "script:python3 mentions_shelf.py"}
    assert all(b["errors"] == 0 for b in metrics["evaluators"].values())


@pytest.mark.slow
def test_the_judges_are_priced_by_judge_price_flags(serve, tmp_path):
    """evaluate's run model is judge 1: --judge-price-in/--judge-price-out price it (and
    any further judge), recorded, so the run's cost is known."""
    from pathlib import Path

    from visioneval.loopback.server import answer_judge

    server = serve(answer=answer_judge)
    example = Path(__file__).parent.parent / "examples" / "evaluators" / "cases.yaml"
    out = tmp_path / "run"
    result = invoke("evaluate", example, *_judge_args(server, out, "--judge-price-in", "2",
                                                       "--judge-price-out", "8",
                                                       "--allow-scripts", "--no-report"))
    assert result.exit_code == 0, result.output
    info = load(out, "run.json")
    assert info["pricing"]["judge_price_in"] == 2.0 and info["pricing"]["price_in"] == 2.0
    usage = info["sessions"][-1]["usage"]["model"]
    tokens_in = sum(b["prompt_tokens"] for b in usage.values())
    tokens_out = sum(b["completion_tokens"] for b in usage.values())
    assert tokens_in and info["counts"]["cost"]["usd"] == pytest.approx(
        (2 * tokens_in + 8 * tokens_out) / 1e6, rel=1e-9)
    assert "to price it" not in result.stdout


def _judge_args(server, out, *extra):
    return ["--judge-backend", "openai", "--judge-model", "m", "--judge-base-url",
            server.base_url + "/v1", "--out", out, "--no-progress", "--backoff-base", "0.01",
            "--backoff-cap", "0.02", *extra]


def _one_line_error(result, *words):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# -- scripts and images from a case file are trusted only when the user says so -----------


def test_script_cases_need_allow_scripts(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "mine.py").write_text(textwrap.dedent(SCRIPT) + f"\nopen({str(marker)!r}, 'w')\n")
    cases = _cases(tmp_path, [
        {"id": "c1", "output": "a cat", "evaluators": [{"script": f"{sys.executable} mine.py"}]},
        {"id": "c2", "output": "a cat", "evaluators": [{"validator": "ocr",
                                                          "options": {"keywords": ["cat"]}}]},
        {"id": "c3", "output": "a dog", "evaluators": [{"script": f"{sys.executable} mine.py"}]},
    ])
    refused = invoke("evaluate", cases, "--out", tmp_path / "run", "--no-progress")
    _one_line_error(refused, str(cases), "c1, c3", "--allow-scripts", "trust")
    assert not marker.exists() and not (tmp_path / "run").exists()
    allowed = invoke("evaluate", cases, "--out", tmp_path / "run", "--no-progress",
                     "--allow-scripts")
    assert allowed.exit_code == 0, allowed.output and marker.exists()


@pytest.mark.slow
def test_images_outside_the_case_folder_are_refused_unless_allowed(tmp_path):
    folder = tmp_path / "cases"
    folder.mkdir()
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    (folder / "inside.png").write_bytes(png_bytes())
    (folder / "link.png").symlink_to(outside)
    check = {"validator": "ocr", "options": {"keywords": ["cat"]}}
    cases = _cases(folder, [
        {"id": "up", "output": "cat", "images": ["../secret.png"], "evaluators": [check]},
        {"id": "absolute", "output": "cat", "images": [str(outside)], "evaluators": [check]},
        {"id": "symlink", "output": "cat", "images": ["link.png"], "evaluators": [check]},
        {"id": "fine", "output": "cat", "images": ["inside.png", str(folder / "inside.png")],
         "evaluators": [check]},
    ])
    result = invoke("evaluate", cases, "--out", tmp_path / "run", "--no-progress")
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "outside" in ln]
    assert len(lines) == 3
    for case, path in (("up", "../secret.png"), ("absolute", str(outside)),
                       ("symlink", "link.png")):
        assert any(f"case {case}" in ln and path in ln and "--allow-outside-images" in ln
                   for ln in lines), (case, lines)
    assert set(load(tmp_path / "run")["cases"]) == {"fine"}
    allowed = invoke("evaluate", cases, "--out", tmp_path / "run2", "--no-progress",
                     "--allow-outside-images")
    assert allowed.exit_code == 0 and len(load(tmp_path / "run2")["cases"]) == 4


# -- judges: unknown names, AgentV's names, paths relative to the case file -------------


def test_unknown_judge_or_judge_without_front_matter_is_one_line_before_sending(
        serve, tmp_path):
    server = serve(answer=lambda p: "{}")
    cases = _cases(tmp_path, [{"id": "d1", "output": "A cat.",
                               "evaluators": [{"judge": "colour-judge"}]}])
    result = invoke("evaluate", cases, *_judge_args(server, tmp_path / "run"))
    _one_line_error(result, str(cases), "d1", "colour-judge", "image-description",
                    "reasoning-judge")
    (tmp_path / "plain.md").write_text("# A judge\nGrade the answer.")
    cases = _cases(tmp_path, [{"id": "d2", "output": "A cat.",
                               "evaluators": [{"judge": "plain.md"}]}])
    result = invoke("evaluate", cases, *_judge_args(server, tmp_path / "run"))
    _one_line_error(result, "plain.md", "d2", "front matter")
    assert server.stats.requests == 0 and not (tmp_path / "run").exists()


def test_the_specs_judge_names_and_rubrics_next_to_the_case_file(serve, tmp_path,
                                                                 monkeypatch):
    from visioneval.loopback.server import answer_judge

    server = serve(answer=answer_judge)
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "mine.md").write_text("---\nname: mine\ndimensions:\n"
                                    "  - {key: truth, weight: 1, question: \"Is it true?\"}\n"
                                    "---\nGrade {{output}}.")
    cases = _cases(folder, [{"id": "d1", "output": "A cat.", "evaluators": [
        {"judge": "image-description-judge"}, {"judge": "reasoning-judge"},
        {"judge": "mine.md"}]}])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # judge files resolve against the case file, not here
    result = invoke("evaluate", cases, *_judge_args(server, tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert set(load(tmp_path / "run")["evaluators"]) == {
        "judge:image-description", "judge:visual-reasoning", "judge:mine.md"}


# -- errors are counted; bad evaluators refused at start ---------------------------------


def test_evaluator_errors_count_as_errors_with_the_benchmark_exit_codes(tmp_path):
    (tmp_path / "crash.py").write_text("raise SystemExit(3)\n")
    cases = _cases(tmp_path, [
        {"id": "c1", "output": "5 cats", "evaluators": [
            {"script": f"{sys.executable} crash.py"},
            {"validator": "count"}]},  # no expected count: an error result
    ])
    out = tmp_path / "run"
    result = invoke("evaluate", cases, "--out", out, "--no-progress", "--allow-scripts")
    assert result.exit_code == 1, result.output
    assert "(2 errors" in result.stdout
    assert load(out, "run.json")["counts"]["errors"] == 2
    assert all(b["errors"] == 1 for b in load(out)["evaluators"].values())


def test_unknown_validator_or_malformed_rubric_is_refused_at_start(tmp_path):
    cases = _cases(tmp_path, [
        {"id": "ok", "output": "5 cats", "expected_output": "5 cats",
         "evaluators": [{"validator": "count"}]},
        {"id": "bad", "output": "5 cats", "evaluators": [{"validator": "colour"}]},
    ])
    result = invoke("evaluate", cases, "--out", tmp_path / "run", "--no-progress")
    _one_line_error(result, str(cases), "case bad", "colour", "count, ocr, json, chart")
    (tmp_path / "broken.md").write_text("---\nname: [unclosed\n---\nx")
    cases = _cases(tmp_path, [{"id": "b2", "output": "x",
                               "evaluators": [{"judge": "broken.md"}]}])
    result = invoke("evaluate", cases, "--out", tmp_path / "run", "--no-progress")
    _one_line_error(result, "broken.md", "case b2", "not YAML")
    assert not (tmp_path / "run").exists()


# -- the response cache never keeps a judge reply that is not a verdict -------------------


def test_a_reply_that_is_not_a_verdict_is_not_cached(serve, tmp_path):
    from visioneval.loopback.server import answer_judge, answer_popout

    wrong = {"server": True}  # first the wrong loopback answers, then the judge

    def answer(prompt):
        return answer_popout(prompt) if wrong["server"] else answer_judge(prompt)

    server = serve(answer=answer)
    cases = _cases(tmp_path, [{"id": "d1", "output": "A cat.",
                               "evaluators": [{"judge": "image-description"}]}])
    cache = ["--cache-dir", tmp_path / "cache"]
    first = invoke("evaluate", cases, *_judge_args(server, tmp_path / "run1", *cache))
    assert first.exit_code == 1, first.output
    wrong["server"] = False
    sent = server.stats.requests
    again = invoke("evaluate", cases, *_judge_args(server, tmp_path / "run2", *cache))
    assert again.exit_code == 0, again.output
    assert server.stats.requests > sent  # asked again, not answered from the cache
    assert load(tmp_path / "run2")["evaluators"]["judge:image-description"]["errors"] == 0
    resumed = invoke("evaluate", "--resume", tmp_path / "run1", "--no-progress",
                     "--judge-base-url", server.base_url + "/v1")
    assert resumed.exit_code == 0, resumed.output


# -- the shared flags of a benchmark command: those that apply work, the others say why ----


def _judge_or_canary(prompt):
    """A judge server that also answers the resolution probe's questions."""
    from visioneval.loopback.server import answer_canary, answer_judge
    from visioneval.probe import reader

    return answer_canary(prompt) if reader.is_canary_question(prompt.text) \
        else answer_judge(prompt)


def test_request_variants_and_stopping_are_refused_in_one_line_naming_the_flag(serve,
                                                                              tmp_path):
    server = serve(answer=_judge_or_canary)
    cases = _cases(tmp_path, [{"id": "d1", "output": "A cat.",
                               "evaluators": [{"judge": "image-description"}]}])
    out = tmp_path / "run"
    for given, words in ((["--variant", "blind"], ["--variant", "--judge-controls"]),
                         (["--target-ci", "5"], ["--target-ci", "pass rate"]),
                         (["--min-samples", "10"], ["--min-samples"]),
                         (["--temperature", "0.5"], ["--temperature", "--judge-temperature"]),
                         (["--max-tokens", "9"], ["--max-tokens", "--judge-max-tokens"])):
        result = invoke("evaluate", cases, *_judge_args(server, out, *given))
        _one_line_error(result, *words)
    assert server.stats.requests == 0 and not out.exists()
    resumed = invoke("evaluate", "--resume", tmp_path / "none", "--variant", "blind")
    _one_line_error(resumed, "--variant: evaluate grades answers already given")


@pytest.mark.slow
def test_probe_resolution_measures_the_judges_endpoint(serve, tmp_path):
    """The judge sees the case's images: --probe-resolution measures its endpoint as for
    any benchmark's model; a run of validators alone has no endpoint to measure."""
    server = serve(answer=_judge_or_canary, downscale=2.0)
    cases = _cases(tmp_path, [{"id": "d1", "output": "A cat.",
                               "evaluators": [{"judge": "image-description"}]}])
    out = tmp_path / "run"
    result = invoke("evaluate", cases, *_judge_args(server, out, "--probe-resolution",
                                                     "--no-report"))
    assert result.exit_code == 0, result.output
    probed = load(out, "run.json")["resolution_probe"]
    assert probed["status"] == "loss" and probed["factor"] == pytest.approx(2.0, rel=0.25)
    assert load(out)["evaluators"]["judge:image-description"]["errors"] == 0
    alone = _cases(tmp_path, [{"id": "c", "output": "5 cats", "expected_output": "5 cats",
                               "evaluators": [{"validator": "count"}]}], name="alone.yaml")
    refused = invoke("evaluate", alone, "--out", tmp_path / "alone", "--probe-resolution")
    _one_line_error(refused, "--probe-resolution", "none backend")


@pytest.mark.slow
def test_a_run_without_out_says_where_it_is(tmp_path, monkeypatch):
    """The run directory is named before the run (results/evaluate-none-<time> for
    validators alone) and is the one the closing lines name."""
    cases = _cases(tmp_path, [{"id": "c", "output": "5 cats", "expected_output": "5 cats",
                               "evaluators": [{"validator": "count"}]}])
    monkeypatch.chdir(tmp_path)
    result = invoke("evaluate", cases, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    (made,) = (tmp_path / "results").iterdir()
    assert made.name.startswith("evaluate-none-") and (made / "metrics.json").is_file()
    assert f"visioneval show results/{made.name}" in result.stdout
