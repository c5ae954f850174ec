"""Validator samples in `visioneval evaluate`: their own kind of record (no model text, the
check named in the target), built-ins called in-process, the subprocess kept for users'
scripts and for payloads whose cost is not bounded; the report shows what it showed when
the result was kept as fake response text, and journals written that way still load."""

from __future__ import annotations

import asyncio
import datetime
import json
import re
import sys
import textwrap

import pytest
import yaml
from cli_helpers import invoke, journal, load

from visioneval.core.records import Record, Response
from visioneval.evaluators.evaluate import summarize
from visioneval.validators.inprocess import INLINE_CHARS, run_builtin, runs_inline
from visioneval.validators.runner import ValidatorCommand, run_validator

SCRIPT = """
    import json, sys
    data = json.loads(sys.stdin.read())
    print(json.dumps({"status": "processed", "score": 1.0, "passed": True,
                      "details": {"seen": data["output"]}}))
"""

PAYLOADS = [
    ("count", {"output": "5 red bottles, 3 cans", "expected_output": "5 bottles, 8 cans"}),
    ("count", {"output": "twenty-five", "expected_output": "25", "threshold": 0.5}),
    ("ocr", {"output": "Project Proposal Q1 2026", "expected_output": "Project proposal",
             "keywords": ["Q1", "budget"]}),
    ("json", {"output": 'see {"name": "Ann", "age": "3"}',
              "expected_output": {"name": "", "age": 0, "tags": [""]}}),
    ("json", {"output": "no json", "expected_output": "[1]"}),
    ("chart", {"output": "€1.5k and 12% in March 2024", "expected_output": "€1,500, 12%, Q1 2024",
               "tolerance": 0.1}),
    ("chart", {"output": "x", "expected_output": "nothing"}),  # an error result
    ("ocr", {"output": "a", "expected_output": "b", "keywords": 3}),  # a bad option
    ("count", {"output": "5", "expected_output": "5", "colour": "red"}),  # unknown option
]


@pytest.mark.parametrize(("name", "payload"), PAYLOADS)
def test_in_process_call_gives_the_commands_result(name, payload):
    assert runs_inline(name, payload)
    inline = asyncio.run(run_builtin(name, dict(payload)))
    command = asyncio.run(run_validator(ValidatorCommand.builtin(name), dict(payload)))
    assert inline.model_dump() == command.model_dump()


@pytest.mark.slow
def test_small_payloads_run_in_process_and_unbounded_ones_keep_the_timeout():
    small = {"output": "5 bottles", "expected_output": "5 bottles"}
    # No process starts and finishes in a microsecond: this result was computed in-process.
    assert asyncio.run(run_builtin("count", small, timeout_s=1e-6)).passed
    big = {"output": "word " * 300, "expected_output": "word " * 300}
    assert not runs_inline("ocr", big) and 2 * len(big["output"]) > INLINE_CHARS
    timed_out = asyncio.run(run_builtin("ocr", big, timeout_s=1e-6))
    assert timed_out.status == "error" and "timed out" in timed_out.details["error"]
    assert asyncio.run(run_builtin("ocr", big)).score == 1.0  # ...and runs with time
    schema = {"output": "{}", "expected_output": "", "schema": {"type": "object"}}
    assert not runs_inline("json", schema)  # a schema's patterns are the case file's regexes
    assert asyncio.run(run_builtin("json", schema)).passed


def test_payloads_that_are_not_json_or_unknown_validators_are_error_results():
    odd = asyncio.run(run_builtin("ocr", {"output": "a", "expected_output": "a",
                                          "keywords": datetime.date(2024, 3, 1)}))
    assert odd.status == "error" and "not JSON" in odd.details["error"]
    unknown = asyncio.run(run_builtin("colour", {"output": "a"}))
    assert unknown.status == "error" and "count, ocr, json, chart" in unknown.details["error"]


def _cases(tmp_path):
    (tmp_path / "mine.py").write_text(textwrap.dedent(SCRIPT))
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump([
        {"id": "bottles", "output": "5 bottles and 3 cans",
         "expected_output": "5 bottles, 8 cans", "evaluators": [
             {"validator": "count", "timeout": 1e-6},  # in-process: the timeout is not needed
             {"script": f"{sys.executable} mine.py"}]},
        {"id": "nochart", "output": "x", "expected_output": "nothing",
         "evaluators": [{"validator": "chart"}]},
    ]))
    return path


def test_a_validator_record_is_not_a_model_response(tmp_path):
    out = tmp_path / "run"
    result = invoke("evaluate", _cases(tmp_path), "--out", out, "--no-progress",
                    "--allow-scripts", "--no-report")
    assert result.exit_code == 1, result.output  # the chart case is an error result
    records = {r["group"]: r for r in journal(out)}
    count, script, chart = (records["validator:count"], records["script:" + sys.executable
                                                                  + " mine.py"],
                            records["validator:chart"])
    for record in (count, script, chart):
        assert record["response"]["text"] is None and record["response"]["source"] == "code"
        assert "argv" not in record["target"] and record["metadata"]["kind"] != "judge"
    assert count["target"] == {"validator": "count", "timeout_s": 1e-6, "payload": {
        "output": "5 bottles and 3 cans", "expected_output": "5 bottles, 8 cans", "input": ""}}
    assert script["target"]["script"] == f"{sys.executable} mine.py"
    assert count["response"]["error"] is None and count["parsed"]["result"]["score"] == 0.5
    assert count["scores"] == {"result": {"score": 0.5, "passed": 0.0}}
    assert script["parsed"]["result"]["details"] == {"seen": "5 bottles and 3 cans"}
    assert chart["response"]["error"] == "expected_output holds no currency amount, " \
        "percentage or date" and chart["parsed"]["result"]["status"] == "error"
    assert [Record.model_validate(r).ok for r in (count, script, chart)] == [True, True, False]
    assert load(out, "run.json")["counts"]["errors"] == 1
    # Running the case file's scripts is a trust given on a command line, never by run.json.
    refused = invoke("evaluate", "--resume", out, "--no-progress", "--no-report")
    assert refused.exit_code == 2 and "pass --allow-scripts" in refused.stderr
    resumed = invoke("evaluate", "--resume", out, "--no-progress", "--no-report",
                     "--allow-scripts")
    assert "2 done before" in resumed.stdout  # only the error is run again


def _browser_rows(run):
    page = (run / "report.html").read_text()
    data = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page,
                     re.S)
    return {row["id"]: row for row in json.loads(data.group(1).replace("<\\/", "</"))["rows"]}


def test_report_and_metrics_are_the_same_for_old_journals_with_fake_text(tmp_path):
    out = tmp_path / "run"
    invoke("evaluate", _cases(tmp_path), "--out", out, "--no-progress", "--allow-scripts")
    new_rows, new_metrics = _browser_rows(out), load(out)
    count = new_rows["bottles/validator:count"]
    assert json.loads(count["r"]) == next(r for r in journal(out) if r["id"] == count["id"]
                                          )["parsed"]["result"]
    assert count["v"]["result"] == {"a": "processed, score 0.500", "ok": False}
    # The same run as the old mechanism journaled it: the result as the response's text,
    # the command in the target, no `source`.
    old_lines = []
    for record in journal(out):
        result = record["parsed"]["result"]
        record["response"].pop("source")
        if record["response"]["error"] is None:
            record["response"]["text"] = json.dumps(result, separators=(",", ":"),
                                                    ensure_ascii=False)
        record["target"] = {"argv": [sys.executable, "-m", "visioneval.validators.count"],
                            "cwd": "", "payload": record["target"]["payload"],
                            "timeout_s": 30.0}
        old_lines.append(json.dumps(record))
    (out / "samples.jsonl").write_text("\n".join(old_lines) + "\n")
    old = [Record.model_validate_json(line) for line in old_lines]
    assert all(r.response.source == "model" for r in old)
    assert summarize(old) == new_metrics
    assert invoke("report", out).exit_code == 0
    assert _browser_rows(out) == new_rows


def test_model_responses_serialise_as_before():
    """`source` is written only for code: model records and cache entries are unchanged."""
    assert json.loads(Response(text="a").model_dump_json()) == {
        "text": "a", "error": None, "finish_reason": None, "prompt_tokens": None,
        "completion_tokens": None, "latency_s": 0.0, "attempts": 1, "cached": False}
    assert not Response().ok and Response(source="code").ok
    assert not Response(source="code", error="x").ok
