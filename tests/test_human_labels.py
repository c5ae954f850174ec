"""Human scores for checking rubric judges (evaluators.human_labels): CSV and JSONL files
written here, raters averaged, the evaluator fallback, and one line per unusable file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from visioneval.evaluators.human_labels import (
    HumanLabels,
    HumanLabelsError,
    HumanScore,
    read_human_labels,
)

CSV = """case,evaluator,dimension,score,rater,comment
cat-1,judge:image-description,accuracy,8,ann,clear
cat-1,judge:image-description,accuracy,6.5,bo,
cat-1,judge:image-description,accuracy,7,cy,
cat-1,,accuracy,3,ann,any judge
cat-1,,completeness,9,ann,
dog-2,judge:image-description-judge,accuracy,10,ann,AgentV's file name
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path) -> str:
    with pytest.raises(HumanLabelsError) as caught:
        read_human_labels(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_csv_raters_are_averaged(tmp_path):
    path = write(tmp_path, "labels.csv", CSV)
    labels = read_human_labels(path)
    assert labels.source == str(path)
    assert labels.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    accuracy = labels.scores["cat-1", "judge:image-description", "accuracy"]
    assert accuracy == HumanScore(mean=(8 + 6.5 + 7) / 3, raters=3)
    assert labels.scores["cat-1", None, "accuracy"] == HumanScore(3.0, 1)
    assert len(labels.scores) == 4


def test_lookup_prefers_the_evaluators_own_rows(tmp_path):
    labels = read_human_labels(write(tmp_path, "labels.csv", CSV))
    assert labels.lookup("cat-1", "judge:image-description", "accuracy").raters == 3
    # A custom threshold is another evaluator label with the same dimension scores.
    assert labels.lookup("cat-1", "judge:image-description@0.9", "accuracy").raters == 3
    assert labels.lookup("cat-1", "judge:visual-reasoning", "accuracy") == HumanScore(3.0, 1)
    assert labels.lookup("cat-1", "judge:image-description", "completeness") == HumanScore(9, 1)
    assert labels.lookup("cat-1", "judge:image-description", "clarity") is None
    assert labels.lookup("cat-9", "judge:image-description", "accuracy") is None


def test_agentv_judge_file_names_are_the_builtin_rubrics(tmp_path):
    labels = read_human_labels(write(tmp_path, "labels.csv", CSV))
    assert labels.scores["dog-2", "judge:image-description", "accuracy"] == HumanScore(10, 1)
    assert labels.lookup("dog-2", "judge:image-description-judge", "accuracy").mean == 10


def test_jsonl_reads_as_the_csv_does(tmp_path):
    rows = [
        {"case": "cat-1", "evaluator": "judge:image-description", "dimension": "accuracy",
         "score": 8, "rater": "ann"},
        {"case": "cat-1", "evaluator": "judge:image-description", "dimension": "accuracy",
         "score": 6.5, "rater": "bo"},
        {"case": "cat-1", "evaluator": "judge:image-description", "dimension": "accuracy",
         "score": "7", "rater": "cy", "note": "ignored"},
        {"case": "cat-1", "dimension": "accuracy", "score": 3},
        {"case": "cat-1", "evaluator": None, "dimension": "completeness", "score": 9},
        {"case": "dog-2", "evaluator": "judge:image-description-judge",
         "dimension": "accuracy", "score": 10},
    ]
    text = "\n".join(json.dumps(row) for row in rows[:3]) + "\n\n" + "\n".join(
        json.dumps(row) for row in rows[3:]) + "\n"
    from_jsonl = read_human_labels(write(tmp_path, "labels.jsonl", text))
    from_csv = read_human_labels(write(tmp_path, "labels.csv", CSV))
    assert from_jsonl.scores == from_csv.scores
    assert isinstance(from_jsonl, HumanLabels)


def test_numeric_case_ids_and_a_byte_order_mark(tmp_path):
    labels = read_human_labels(write(tmp_path, "labels.jsonl",
                                     '{"case": 12, "dimension": "accuracy", "score": 4}\n'))
    assert labels.lookup("12", "judge:activity", "accuracy") == HumanScore(4.0, 1)
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffcase,dimension,score\r\n12,accuracy,4\r\n".encode())
    assert read_human_labels(path).scores == labels.scores


def test_a_file_without_a_known_suffix_is_read_by_its_first_character(tmp_path):
    jsonl = write(tmp_path, "labels.txt", '{"case": "a", "dimension": "d", "score": 1}\n')
    csv = write(tmp_path, "labels.tsv", "case,dimension,score\na,d,1\n")
    assert read_human_labels(jsonl).scores == read_human_labels(csv).scores


@pytest.mark.parametrize(("row", "expected"), [
    ("cat-1,,accuracy,eight", "line 3, field `score`: 'eight' is not a number"),
    ("cat-1,,accuracy,10.5", "line 3, field `score`: 10.5 is outside 0-10"),
    ("cat-1,,accuracy,-1", "line 3, field `score`: -1 is outside 0-10"),
    ("cat-1,,accuracy,10.001", "line 3, field `score`: 10.001 is outside 0-10"),
    ("cat-1,,accuracy, 1e2", "line 3, field `score`: 1e2 is outside 0-10"),
    ("cat-1,,accuracy,nan", "line 3, field `score`: 'nan' is not a number"),
    ("cat-1,,accuracy,", "line 3, field `score`: empty"),
    (",,accuracy,5", "line 3, field `case`: empty"),
    ("cat-1,,  ,5", "line 3, field `dimension`: empty"),
    ("cat-1", "line 3, field `dimension`: missing"),
])
def test_one_bad_csv_row_refuses_the_file(tmp_path, row, expected):
    path = write(tmp_path, "labels.csv",
                 f"case,evaluator,dimension,score\ncat-1,,accuracy,5\n{row}\ncat-2,,a,1\n")
    assert refused(path) == f"{path}, {expected}"


def test_the_line_of_a_bad_row_after_a_quoted_line_break(tmp_path):
    path = write(tmp_path, "labels.csv", 'case,dimension,score,comment\n'
                 'a,accuracy,5,"two\nlines"\nb,accuracy,11,\n')
    assert refused(path) == f"{path}, line 4, field `score`: 11 is outside 0-10"


def test_a_missing_column_is_named(tmp_path):
    path = write(tmp_path, "labels.csv", "case,evaluator,score\na,judge:activity,5\n")
    assert refused(path) == (f"{path}, line 1: no `dimension` column (the header has case, "
                             "evaluator, score)")


@pytest.mark.parametrize(("line", "expected"), [
    ('[1, 2]', "line 2: not a JSON object"),
    ('{"case": "a", "dimension": "d"', "line 2: not JSON"),
    ('{"case": "a", "score": 5}', "line 2, field `dimension`: missing"),
    ('{"case": "a", "dimension": "d", "score": true}', "line 2, field `score`: true is not a "
     "number"),
    ('{"case": "a", "dimension": "d", "score": [5]}', "line 2, field `score`: [5] is not a "
     "number"),
    ('{"case": ["a"], "dimension": "d", "score": 5}', 'line 2, field `case`: ["a"] is not '
     "text"),
    ('{"dimension": "d", "score": 5}', "line 2, field `case`: missing"),
])
def test_one_bad_jsonl_line_refuses_the_file(tmp_path, line, expected):
    path = write(tmp_path, "labels.jsonl",
                 '{"case": "a", "dimension": "d", "score": 5}\n' + line + "\n")
    assert refused(path).startswith(f"{path}, {expected}")


def test_a_rater_scoring_the_same_thing_twice_is_refused(tmp_path):
    path = write(tmp_path, "labels.csv", "case,dimension,score,rater\na,accuracy,5,ann\n"
                 "a,accuracy,6,bo\na,accuracy,7,ann\n")
    assert refused(path) == (f"{path}, line 4, field `rater`: ann already scored case a, "
                             "dimension accuracy on line 2")


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("labels.csv", "", "empty file"),
    ("labels.jsonl", "\n  \n", "empty file"),
    ("labels.csv", "case,dimension,score\n", "no label rows"),
])
def test_an_empty_file_is_refused(tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    assert refused(path) == f"{path}: {expected}"


def test_unreadable_files(tmp_path):
    assert refused(tmp_path / "absent.csv") == f"{tmp_path / 'absent.csv'}: no such file"
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"case,dimension,score\ncaf\xe9,accuracy,5\n")
    assert refused(latin) == f"{latin}: not UTF-8 text (byte 24)"


def test_scores_no_case_of_the_run_looks_up_are_the_unused_ones(tmp_path):
    labels = read_human_labels(write(tmp_path, "labels.csv", CSV))
    asked = [("cat-1", "judge:image-description", "accuracy"),
             ("cat-1", "judge:visual-reasoning", "completeness")]
    # cat-1's rows without an evaluator: accuracy is passed over (the evaluator has its
    # own), completeness is used; dog-2 is not in this run.
    assert labels.unused(asked) == [("cat-1", None, "accuracy"),
                                    ("dog-2", "judge:image-description", "accuracy")]
    assert labels.unused([]) == list(labels.scores)


def test_a_score_a_hair_past_the_scale_is_read_as_its_end(tmp_path):
    """A spreadsheet's 10.0000001 is a 10 written through floating point."""
    path = write(tmp_path, "labels.csv", "case,dimension,score\na,d,10.0000001\n"
                                         "b,d,-0.0000001\n")
    labels = read_human_labels(path)
    assert labels.scores["a", None, "d"].mean == 10.0
    assert labels.scores["b", None, "d"].mean == 0.0
    jsonl = write(tmp_path, "labels.jsonl", '{"case": "a", "dimension": "d", '
                                            '"score": 10.5000001}\n')
    assert refused(jsonl) == f"{jsonl}, line 1, field `score`: 10.5000001 is outside 0-10"
