"""`visioneval rescore` for BLINK, end to end: lmms-eval's `--log_samples` files of the
blink_* tasks (lmms_eval/tasks/blink/utils.py at 75571cfe) and VLMEvalKit's BLINK prediction
file (tsv, xlsx through openpyxl) made from its documented columns. Each hand-made answer's
verdict is derived from the reference code named beside it."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from lmms_logs import line, write

from visioneval.benchmarks.blink.prompts import lmms_eval as lmms_prompt
from visioneval.benchmarks.blink.questions import Question

FAIL = "Failed to obtain answer via API."
COUNTING = Question("val_Counting_1", "Counting", "How many blue floats are there?",
                    ("0", "3", "2", "1"), "(B)",
                    "How many blue floats are there?\nSelect from the following choices.\n"
                    "(A) 0\n(B) 3\n(C) 2\n(D) 1")
DEPTH = Question("val_Relative_Depth_1", "Relative_Depth", "Which point is closer to the "
                 "camera?", ("A is closer", "B is closer"), "(A)",
                 "Which point is closer to the camera?\nSelect from the following choices.\n"
                 "(A) A is closer\n(B) B is closer")


def logged(version: str, doc_id: int, q: Question, response: str, parsed: str) -> dict:
    """A line as blink_process_results logs it (utils.py:100-111)."""
    gold = q.answer.strip("()")
    field = {"id": f"{q.idx[:-1]}{doc_id + 1}", "gt_content": gold, "pred_parsed": parsed,
             "pred": response, "sub_task": q.task.replace("_", " "),
             "is_correct": parsed == gold}
    return line(version, doc_id, q.answer, response, lmms_prompt(q), {"blink_acc": field})


def test_lmms_eval_logs_of_two_tasks_rescored(tmp_path):
    # (answer, the letter lmms-eval logs: `_extract_answer_letter`, utils.py:10-28, the
    # reply's first letter whatever word it starts)
    counting = [("B", "B"), ("(C) 2", "C"), ("The answer is B", "T"), ("", "")]
    # lmms-eval reads "<think>..." as no letter ("<" starts no match); visioneval sets the
    # reasoning aside first (docs/rescore.md), as in its own runs, and reads "A".
    depth = [("A.", "A"), ("<think>the left one</think>A", "")]
    folder = tmp_path / "logs" / "qwen"
    write(folder / "20250101_samples_blink_counting.jsonl",
          [logged("0.4", i, COUNTING, r, p) for i, (r, p) in enumerate(counting)])
    write(folder / "20250101_samples_blink_relative_depth.jsonl",
          [logged("0.7", i, DEPTH, r, p) for i, (r, p) in enumerate(depth)]
          + ['{"doc_id": 9, "target": "(A)"'])
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", folder, "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert list(metrics["protocols"]) == ["lmms-eval"]
    block = metrics["protocols"]["lmms-eval"]["original"]
    # Counting: "B" right, "(C) 2" and "The answer is B" (read T) wrong, "" a failed request
    # (lmms-eval logs a failure as ""); Relative_Depth: "A." and the answer after the
    # reasoning right.
    assert (block["n"], block["n_errors"]) == (5, 1)
    assert block["per_task"]["Counting"] == {"n": 3, "accuracy": pytest.approx(1 / 3)}
    assert block["per_task"]["Relative_Depth"]["accuracy"] == 1.0
    assert block["macro"] == pytest.approx((1 / 3 + 1) / 2)  # the paper's and lmms-eval's
    assert block["micro"] == pytest.approx(3 / 5)
    records = journal(out)
    assert [r["id"] for r in records][:2] == ["val_Counting_1/lmms-eval",
                                              "val_Counting_2/lmms-eval"]
    assert records[0]["metadata"]["choices"] == ["0", "3", "2", "1"]
    assert records[0]["metadata"]["question"] == ("How many blue floats are there?\n"
                                                  "Select from the following choices.")
    checks = load(out, "run.json")["rescored_from"]["checks"]
    assert checks["lmms_eval_extraction"] == {"compared": 6, "differ": 0}
    notes = flat(result.stdout + result.stderr)
    assert "agrees with the same extraction here on 6 of 6 answers" in notes
    assert "20250101_samples_blink_relative_depth.jsonl line 3" in notes


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    """As pandas' `to_csv(sep="\\t", quoting=csv.QUOTE_ALL)` writes it (vlmeval/smp/file.py
    `dump_tsv`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


# BLINK.tsv's columns as VLMEvalKit's MCQ code reads them (image_mcq.py:212-247,
# multiple_choice.py:346-351 and 88-99), plus `prediction` (inference.py).
HEADER = ["index", "question", "A", "B", "C", "D", "answer", "category", "prediction"]
COUNT = ["How many blue floats are there?", "0", "3", "2", "1", "B", "Counting"]
TWO = ["Which point is closer to the camera?", "Point A", "Point B", "", "", "A",
       "Relative_Depth"]
# (row, prediction, verdict) under VLMEvalKit's rules without a judge, `can_infer`
# (vlmeval/utils/matching_util.py:124-127):
ANSWERS = [
    (COUNT, "B", 1.0),  # one option letter among the last tokens (matching_util.py:52)
    (COUNT, "(B).", 1.0),  # brackets and dots become spaces first (matching_util.py:40-44)
    (COUNT, "The answer is (B)", 1.0),  # "B" is the 4th of 4 tokens (line 52)
    (COUNT, "3", 1.0),  # no letter; the option text "3" alone is in it (lines 107-121)
    (COUNT, "A or B", 0.0),  # two letters, no one text: the judge's turn, Z without it
    (COUNT, "Cannot determine the answer", 0.0),  # a refusal it knows: Z (lines 24-30)
    (COUNT, FAIL, None),  # VLMEvalKit's failure answer: an error, never a wrong answer
    (TWO, "", None),  # an empty prediction: an error
    (TWO, "Point A", 1.0),  # "A" is the 2nd of 2 tokens (line 52)
]


def blink_rows() -> list[list[str]]:
    return [[str(i), *row[:-1], row[-1], answer] for i, (row, answer, _) in enumerate(ANSWERS)]


def check_vlmevalkit_run(out: Path) -> None:
    metrics = load(out)
    assert list(metrics["protocols"]) == ["vlmevalkit"]
    block = metrics["protocols"]["vlmevalkit"]["original"]
    scored = [v for _, _, v in ANSWERS if v is not None]
    assert (block["n"], block["n_errors"]) == (len(scored), 2)
    assert block["per_task"]["Counting"] == {"n": 6, "accuracy": pytest.approx(4 / 6)}
    assert block["per_task"]["Relative_Depth"] == {"n": 1, "accuracy": 1.0}
    # VLMEvalKit's Overall: the mean over every row (report_acc, multiple_choice.py:90)
    assert block["micro"] == pytest.approx(sum(scored) / len(scored))
    records = {r["id"]: r for r in journal(out)}
    for i, (_, _, verdict) in enumerate(ANSWERS):
        record = records[f"{i}/vlmevalkit"]
        if verdict is None:
            assert record["response"]["error"], record
        else:
            assert record["scores"]["vlmevalkit"]["correct"] == verdict, record
    sent = records["0/vlmevalkit"]["prompt"][0]["parts"][0]
    assert sent == ("Question: How many blue floats are there?\nOptions:\nA. 0\nB. 3\nC. 2\n"
                    "D. 1\nPlease select the correct answer from the options above. \n")


def test_vlmevalkit_tsv_scored_by_vlmevalkit_rules(tmp_path):
    rows = blink_rows() + [["99", "?", "x", "y", "", "", "A", "Jigsaw_Puzzle", "A"]]
    path = write_tsv(tmp_path / "GPT4o" / "T20260801_Gabc" / "GPT4o_BLINK.tsv", HEADER, rows)
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "vlmevalkit", path, "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    check_vlmevalkit_run(out)
    info = load(out, "run.json")
    assert info["backend"]["model"] == "GPT4o"
    notes = flat(result.stdout + result.stderr)
    assert "category 'Jigsaw_Puzzle' is not a BLINK task" in notes
    assert "the paper's and lmms-eval's need answers to their own prompts" in notes


@pytest.mark.skipif(importlib.util.find_spec("openpyxl") is None,
                    reason="openpyxl is not installed (the extra `vlmevalkit`)")
def test_vlmevalkit_xlsx_read_with_openpyxl(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(HEADER)
    for row in blink_rows():  # xlsxwriter stores numbers as numbers, an empty cell as none
        sheet.append([int(row[0]), *(cell or None for cell in row[1:])])
    book.save(tmp_path / "M_BLINK.xlsx")
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "vlmevalkit", tmp_path / "M_BLINK.xlsx", "--out", out,
                    "--no-report")
    assert result.exit_code == 0, result.output
    check_vlmevalkit_run(out)
