"""`visioneval evaluate` and `visioneval validate` as a user runs them."""

from __future__ import annotations

import json
import sys
import textwrap

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
    result = invoke("evaluate", cases, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    skipped = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    assert any("case broken" in ln and "evaluators" in ln for ln in skipped)
    assert any("case badimage" in ln and "cannot read missing.png" in ln for ln in skipped)
    metrics = load(out)
    assert metrics["evaluators"]["validator:count"] == {
        "n": 1, "processed": 1, "errors": 0, "skipped": 0, "passed": 0, "pass_rate": 0.0,
        "mean_score": 0.5, "score_stdev": 0.0}
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
    resumed = invoke("evaluate", "--resume", out, "--no-progress")
    assert resumed.exit_code == 0 and server.stats.requests == 1  # nothing left to do


def test_shipped_example_runs_with_the_scripted_judge(serve, tmp_path):
    from pathlib import Path

    from visioneval.loopback.server import answer_judge

    server = serve(answer=answer_judge)
    example = Path(__file__).parent.parent / "examples" / "evaluators" / "cases.yaml"
    out = tmp_path / "run"
    result = invoke("evaluate", example, "--judge-backend", "openai", "--judge-model", "m",
                    "--judge-base-url", server.base_url + "/v1", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert set(metrics["evaluators"]) == {
        "judge:image-description", "judge:structured-output", "validator:count",
        "validator:chart", "validator:ocr", "validator:json",
        "script:python3 mentions_shelf.py"}
    assert all(b["errors"] == 0 for b in metrics["evaluators"].values())
