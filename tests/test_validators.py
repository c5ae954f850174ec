"""The four code validators: AgentV's scenarios, edge cases, the command protocol, and the
subprocess runner with real processes (timeouts, crashes, garbage output)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest

from visioneval.validators import chart, count, ocr
from visioneval.validators import json as json_validator
from visioneval.validators.runner import ValidatorCommand, run_validator

# -- count ---------------------------------------------------------------------------------


def test_count_spec_scenarios():
    assert count.validate("5 bottles", "5 bottles")["score"] == 1.0
    partial = count.validate("5 bottles, 3 cans", "5 bottles, 8 cans")
    assert partial["score"] == 0.5 and not partial["passed"]
    assert partial["details"]["wrong"] == {"can": {"expected": 8, "found": 3}}


@pytest.mark.parametrize(("output", "expected", "score"), [
    ("3 bottles, 5 cans", "5 bottles, 3 cans", 0.0),          # swapped counts do not match
    ("There are five bottles and three cans.", "5 bottles, 3 cans", 1.0),  # number words
    ("I count 1,200 chairs", "1200 chairs", 1.0),              # thousands separators
    ("one bottle", "1 bottles", 1.0),                          # singular and plural
    ("twenty-five people", "25 persons", 1.0),                 # irregular plural
    ("5 red bottles on the shelf", "5 bottles", 1.0),          # adjectives, prepositions
    ("a cat and 2 dogs", "1 cat, 2 dogs", 1.0),                # "a" counts one
    ("a lot of cars", "3 cars", 0.0),                          # "a lot" is no count
    ("5", "5", 1.0),                                            # bare numbers
    ("7 bottles", "5 bottles", 0.0),
])
def test_count_cases(output, expected, score):
    assert count.validate(output, expected)["score"] == score


def test_count_without_expected_count_is_an_error():
    result = count.validate("5 bottles", "some bottles")
    assert result["status"] == "error" and result["score"] is None


# -- ocr -----------------------------------------------------------------------------------


def test_ocr_spec_scenarios():
    same = ocr.validate("Project Proposal Q1 2026", "Project Proposal Q1 2026")
    assert same["score"] > 0.9 and same["passed"]
    keywords = ocr.validate("We discuss the budget and the timeline.", "",
                            keywords="budget, timeline, deliverables")
    assert keywords["score"] == pytest.approx(2 / 3)
    assert keywords["details"]["missing_keywords"] == ["deliverables"]


def test_ocr_normalises_case_and_space_and_combines_parts():
    result = ocr.validate("PROJECT   proposal\nq1 2026", "Project Proposal Q1 2026",
                          keywords=["proposal", "budget"])
    assert result["details"]["similarity"] == 1.0
    assert result["details"]["keyword_coverage"] == 0.5
    assert result["score"] == 0.75
    assert not ocr.has_keyword("budgetary notes", "budget")  # whole words only


# -- json ----------------------------------------------------------------------------------

EXPECTED = json.dumps({"objects": [{"label": "cat", "box": [1, 2, 3, 4]}], "count": 1})


def test_json_finds_json_in_prose_and_fences():
    prose = 'Here you go: {"objects": [{"label": "dog", "box": [0, 0, 5, 5]}], "count": 1} done'
    assert json_validator.validate(prose, EXPECTED)["score"] == 1.0
    fenced = 'Result:\n```json\n{"objects": [], "count": 0}\n```'
    assert json_validator.validate(fenced, EXPECTED)["details"]["parseable"]


def test_json_missing_keys_and_type_errors_with_paths():
    answer = '{"objects": [{"label": 7}], "extra": true}'
    result = json_validator.validate(answer, EXPECTED)
    details = result["details"]
    assert set(details["missing_keys"]) == {"$.count", "$.objects[0].box"}
    assert details["type_errors"] == [{"path": "$.objects[0].label", "expected": "string",
                                       "found": "number"}]
    assert 0 < result["score"] < 1 and not result["passed"]


def test_json_schema_and_unparseable_and_top_level_array():
    schema = {"type": "object", "required": ["name", "age"],
              "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
    result = json_validator.validate('{"name": "Ann"}', "", schema=schema)
    assert result["details"]["missing_keys"] == ["$.age"]
    assert json_validator.validate('{"name": "Ann", "age": 3}', "", schema=schema)["score"] == 1
    bad = json_validator.validate("no json here", EXPECTED)
    assert bad["status"] == "processed" and bad["score"] == 0.0
    assert not bad["details"]["parseable"]
    array = json_validator.validate("[1, 2, 3]", "[0]")
    assert array["score"] == 1.0


def test_json_deep_nesting_and_huge_input_do_not_crash():
    deep = "[" * 100_000 + "]" * 100_000
    result = json_validator.validate(deep, "[]")
    assert result["status"] in ("processed", "error")  # a result, not a crash
    nested = {"a": 1}
    for _ in range(500):
        nested = {"k": nested}
    text = json.dumps(nested)
    assert json_validator.validate(text, text)["score"] == 1.0
    huge = "x{" * 200_000 + '{"count": 1}'
    assert json_validator.validate(huge, '{"count": 1}')["status"] == "processed"


# -- chart ---------------------------------------------------------------------------------


def test_chart_spec_scenarios():
    assert chart.validate("Q4: $2.4M", "$2.4M")["score"] == 1.0
    assert chart.validate("58% growth", "58%")["score"] == 1.0


@pytest.mark.parametrize(("output", "expected", "score"), [
    ("$2,400,000", "$2.4M", 1.0),
    ("2.4 million dollars", "$2.4M", 1.0),
    ("$2.7M", "$2.4M", 1.0),         # within 15%
    ("$2.8M", "$2.4M", 0.0),         # 16.7% off
    ("-58%", "58%", 0.0),            # sign matters
    ("58.0 %", "58%", 1.0),
    ("57%", "58%", 0.0),             # percentages are exact
    ("5 bottles", "$5", 0.0),        # not currency
    ("$0", "$0", 1.0),               # expected zero does not divide by zero
    ("$3", "$0", 0.0),
    ("Q3 2024 revenue", "Q3", 1.0),
    ("in 2023", "2024", 0.0),
    ("€1.5k and 12%", "€1,500, 12%", 1.0),
    ("$5", "€5", 0.0),               # currencies differ
])
def test_chart_cases(output, expected, score):
    assert chart.validate(output, expected)["score"] == score


def test_chart_tolerance_is_an_option():
    assert chart.validate("$2.8M", "$2.4M", tolerance=0.2)["score"] == 1.0


# -- protocol and runner -------------------------------------------------------------------


def _module(name, payload, stdin=False):
    args = [sys.executable, "-m", f"visioneval.validators.{name}"]
    if stdin:
        return subprocess.run(args, input=payload, capture_output=True, text=True)
    return subprocess.run([*args, payload], capture_output=True, text=True)


@pytest.mark.slow
def test_module_protocol_exit_codes_and_stdin():
    passed = _module("count", '{"output": "5 bottles", "expected_output": "5 bottles"}')
    assert passed.returncode == 0 and json.loads(passed.stdout)["score"] == 1.0
    failed = _module("count", '{"output": "5 bottles, 3 cans", "expected_output": '
                              '"5 bottles, 8 cans"}', stdin=True)
    assert failed.returncode == 1 and json.loads(failed.stdout)["score"] == 0.5
    broken = _module("ocr", "{not json")
    assert broken.returncode == 2 and "Traceback" not in broken.stdout + broken.stderr
    assert json.loads(broken.stdout)["status"] == "error"


def _script(tmp_path, body):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(body))
    return ValidatorCommand.script(f"{sys.executable} {path}")


def _run(command, timeout=30.0):
    return asyncio.run(run_validator(command, {"output": "a", "expected_output": "b"}, timeout))


def test_runner_runs_builtins_and_users_scripts(tmp_path):
    result = asyncio.run(run_validator(ValidatorCommand.builtin("chart"),
                                       {"output": "58%", "expected_output": "58%"}))
    assert result.status == "processed" and result.passed
    user = _script(tmp_path, """
        import json, sys
        data = json.loads(sys.stdin.read())
        print(json.dumps({"status": "processed", "score": 1.0 if data["output"] == "a" else 0,
                          "passed": True, "details": {}}))
    """)
    assert _run(user).score == 1.0


@pytest.mark.slow
def test_runner_turns_timeouts_crashes_and_garbage_into_errors(tmp_path):
    slow = _script(tmp_path, "import time; time.sleep(30)")
    result = _run(slow, timeout=0.5)
    assert result.status == "error" and "timed out after 0.5 s" in result.details["error"]
    crash = _script(tmp_path, "raise SystemExit(3)")
    assert "exited with code 3" in _run(crash).details["error"]
    boom = _script(tmp_path, "1/0")
    result = _run(boom)
    assert result.status == "error" and "ZeroDivisionError" in result.details["stderr"]
    garbage = _script(tmp_path, "print('hello')")
    assert "not a result" in _run(garbage).details["error"]
    missing = ValidatorCommand.script("/nonexistent/validator --flag")
    assert "cannot start" in _run(missing).details["error"]
    with pytest.raises(ValueError, match="unknown validator"):
        ValidatorCommand.builtin("nope")


GRANDCHILD = """
    import json, subprocess, sys, time
    # A grandchild that inherits stdout and outlives the script (as `uv run` leaves python).
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(40)"])
    open(sys.argv[1], "w").write(str(child.pid))
    print(json.dumps({"status": "processed", "score": 1.0, "passed": True, "details": {}}),
          flush=True)
    if sys.argv[2] == "hang":
        time.sleep(40)
"""


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return "\nState:\tZ" not in status.read()
    except FileNotFoundError:
        return False


def _wait_dead(pid: int, seconds: float = 5.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


@pytest.mark.parametrize("mode", [pytest.param("hang", marks=pytest.mark.slow), "exit"])
def test_timeout_kills_the_scripts_children_too(tmp_path, mode):
    import time

    script = tmp_path / "spawner.py"
    script.write_text(textwrap.dedent(GRANDCHILD))
    pidfile = tmp_path / "child.pid"
    command = ValidatorCommand.script(f"{sys.executable} {script} {pidfile} {mode}")
    started = time.monotonic()
    result = _run(command, timeout=2.0)
    elapsed = time.monotonic() - started
    # Before: the run waited for the grandchild (40 s) holding stdout open.
    assert elapsed < 20, elapsed
    if mode == "hang":
        assert result.status == "error" and "timed out after 2 s" in result.details["error"]
        assert _wait_dead(int(pidfile.read_text()))  # the whole process group was killed
    else:  # the script itself finished: its result counts, whatever its child does
        assert result.status == "processed" and result.passed
        os.kill(int(pidfile.read_text()), 9)


def test_cancel_kills_the_validators_process_group(tmp_path):
    script = tmp_path / "spawner.py"
    script.write_text(textwrap.dedent(GRANDCHILD))
    pidfile = tmp_path / "child.pid"
    command = ValidatorCommand.script(f"{sys.executable} {script} {pidfile} hang")

    async def cancel_soon():
        task = asyncio.ensure_future(run_validator(command, {"output": "a"}, 60))
        for _ in range(200):
            await asyncio.sleep(0.05)
            if pidfile.exists() and pidfile.read_text():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    assert _wait_dead(int(pidfile.read_text()))


# -- chart dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(("output", "expected", "score"), [
    ("on 2024-03-16", "2024-03-15", 0.0),          # day given: the day must agree
    ("on 2024-03-15", "2024-03-15", 1.0),
    ("April 2024", "March 2024", 0.0),             # month given: the month must agree
    ("March 2024", "March 2024", 1.0),
    ("2024-03-15", "March 2024", 1.0),             # a more precise answer agrees
    ("March 15, 2024", "2024-03-15", 1.0),         # written forms compare as dates
    ("15 March 2024", "2024-03-15", 1.0),
    ("Mar. 2024", "2024-03", 1.0),
    ("March 2024", "2024-03-15", 0.0),             # the expected day is not stated
    ("2023-03-15", "March 2024", 0.0),             # year differs
    ("March 2024", "Q1 2024", 1.0),                # a month gives its quarter
    ("Q2 2024", "Q1 2024", 0.0),
    ("Q1 2024", "March 2024", 0.0),                # a quarter does not give the month
    ("2024/03/15", "2024-03-15", 1.0),
    ("in 2024", "2024", 1.0),
    ("March 2024", "2024", 1.0),
])
def test_chart_dates_compare_at_the_precision_given(output, expected, score):
    assert chart.validate(output, expected)["score"] == score
