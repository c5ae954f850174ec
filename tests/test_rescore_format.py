"""Reading lmms-eval's samples files, whatever version wrote them: file names, the response
fields' shapes, failed requests, bad lines (counted, warned with file and line, capped)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from lmms_logs import line, write

from visioneval.core.foreign import LogFile
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.foreign import lmms_eval
from visioneval.io.lines import WARN_PER_FILE, BadLines, json_lines


def test_task_from_the_file_name():
    assert lmms_eval.task_of(Path("20250716_120000_samples_p3_box_img.jsonl")) == "p3_box_img"
    assert lmms_eval.task_of(Path("2024-09-17T12-00-00.1_samples_o3.jsonl")) == "o3"
    assert lmms_eval.task_of(Path("20250716_120000_results.json")) is None
    assert lmms_eval.task_of(Path("20250716_120000_samples_.jsonl")) is None


@pytest.mark.parametrize("value, text", [
    ("color", "color"), (["color"], "color"), ([["color"]], "color"),
    ([["a", "b"]], "a"), ([], None), ([[]], None), (None, None), (3, "3")])
def test_first_text_of_every_layout(value, text):
    assert lmms_eval.first_text(value) == text


def read_one(tmp_path: Path, fields: dict) -> lmms_eval.Logged:
    path = write(tmp_path / "x_samples_p3.jsonl", [fields])
    (logged,) = lmms_eval.read(LogFile(path, "p3"), BadLines())
    return logged


@pytest.mark.parametrize("version", ["0.3", "0.4", "0.7"])
def test_a_line_of_each_version(tmp_path, version):
    logged = read_one(tmp_path, line(version, 7, "color", "Color", "q?", {"exact_match":
                                                                          {"score": 1}},
                                     doc={"question": "q?", "answer": "color"}))
    assert (logged.doc_id, logged.target, logged.prompt) == (7, "color", "q?")
    assert (logged.raw, logged.filtered, logged.raw_logged) == ("Color", "Color",
                                                                version == "0.3")
    assert lmms_eval.score_field(logged.metric("exact_match")) == 1.0
    assert logged.response().text == "Color" and logged.response().ok
    assert (logged.doc is not None) == (version == "0.3")


def test_failed_and_empty_responses_are_errors(tmp_path):
    failed = read_one(tmp_path, line("0.7", 0, "a", "[LMMS_EVAL_REQUEST_FAILED after 5 "
                                     "retries] 429 Too Many Requests", "q", {}))
    assert not failed.response().ok and "429" in (failed.response().error or "")
    empty = read_one(tmp_path, line("0.4", 0, "a", "", "q", {}))
    assert empty.response().error == lmms_eval.EMPTY_ERROR
    blank = read_one(tmp_path, line("0.7", 0, "a", "  \n", "q", {}))
    assert not blank.response().ok
    tokens = read_one(tmp_path, line("0.7", 0, "a", "b", "q", {},
                                     tokens={"input_tokens": 5, "output_tokens": 2}))
    assert (tokens.response().prompt_tokens, tokens.response().completion_tokens) == (5, 2)


def test_bad_lines_are_counted_and_warned_with_file_and_line(tmp_path, caplog):
    rows: list = [line("0.7", i, "a", "b", "q", {}) for i in range(3)]
    rows[1:1] = ["not json", '{"doc_id": -1, "filtered_resps": "x"}', '"text"',
                 '{"doc_id": 4}', ""]
    path = write(tmp_path / "x_samples_p3.jsonl", rows)
    bad = BadLines()
    with caplog.at_level(logging.WARNING):
        read = list(lmms_eval.read(LogFile(path, "p3"), bad))
    assert [r.doc_id for r in read] == [0, 1, 2]
    assert bad.total == 4 and bad.tally(path).lines == 7  # the blank line is not counted
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith(f"{path} line 2: not JSON: ")
    assert messages[0].endswith("; line skipped")
    assert messages[1:] == [
        f"{path} line 3: no doc_id (a whole number) in the line; line skipped",
        f"{path} line 4: a JSON string, not an object; line skipped",
        f"{path} line 5: neither resps nor filtered_resps in the line; line skipped"]
    assert len(bad.tally(path).sha256) == 64


def test_warnings_stop_after_a_few_per_file_the_count_does_not(tmp_path, caplog):
    path = write(tmp_path / "x_samples_p3.jsonl", ["{"] * (WARN_PER_FILE + 30))
    bad = BadLines()
    with caplog.at_level(logging.WARNING):
        assert list(json_lines(path, bad)) == []
    assert bad.total == WARN_PER_FILE + 30
    assert len(caplog.records) == WARN_PER_FILE + 1
    assert "more bad lines" in caplog.records[-1].getMessage()


@pytest.mark.parametrize("benchmark", ["salbench", "illusionbench"])
def test_a_rescored_run_of_an_earlier_version_names_where_its_definition_was(benchmark):
    """Earlier versions recorded the re-scoring definition under the lmms-eval reader's
    module; such a run still opens with the definition that rebuilds it without data."""
    from visioneval.core import registry

    old = f"visioneval.benchmarks.{benchmark}.lmms_eval:RESCORED"
    def info(definition: str) -> RunInfo:
        return RunInfo(benchmark=benchmark, definition=definition,
                       backend=BackendInfo(kind="rescored", model="m"))

    found = registry.for_run(info(old))
    assert found is registry.for_run(info(registry.MOVED[old]))
    assert type(found).__name__.startswith("Rescored")
