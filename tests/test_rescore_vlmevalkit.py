"""`visioneval rescore --from vlmevalkit` on prediction files in VLMEvalKit's own layout
(vlmeval/inference.py `infer_data_job`, vlmeval/smp/file.py `dump`): the dataset's TSV
columns plus `prediction`, no image, `<model>_<dataset>.tsv` written as pandas writes it (tab,
every cell quoted), json as a list of rows; a failure answer is an error, a torn row is one
line and skipped; xlsx needs openpyxl."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load

FAIL = "Failed to obtain answer via API."


def write_tsv(path: Path, header: list[str], rows: list[list[str]], torn: str = "") -> Path:
    """As pandas' `to_csv(sep="\\t", quoting=csv.QUOTE_ALL)` writes it; `torn`: a raw line
    appended (a malformed row)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        fh.write(torn)
    return path


def rescore(*args: object):
    return invoke("rescore", "--from", "vlmevalkit", *args, "--no-report")


POPE_HEADER = ["index", "question", "answer", "category", "prediction"]
POPE_ROWS = [
    ["0", "Is there a dog in the image?", "Yes", "random", "Yes"],
    ["1", "Is there a cat in the image?", "No", "random,popular", "No, there is not."],
    ["2", "Is there a car in the image?", "Yes", "adversarial", FAIL],
    ["3", "Is there a cup in the image?", "No", "popular", "I cannot tell."],
    ["4", "Is there a bus in the image?", "Yes", "adversarial", "yes"],
]


def test_pope_tsv_scored_by_the_paper_and_vlmevalkit(tmp_path):
    path = write_tsv(tmp_path / "work" / "GPT4o" / "T20260801_Gabc" / "GPT4o_POPE.tsv",
                     POPE_HEADER, POPE_ROWS, torn='"5"\t"Is there a"\n')
    out = tmp_path / "run"
    result = rescore(path, "--out", out)
    assert result.exit_code == 0, result.output
    metrics = load(out)
    paper = metrics["paper"]["original"]["settings"]
    vlm = metrics["vlmevalkit"]["original"]["settings"]
    # random: "Yes" to a yes, "No, there is not." to a no: both right under both rules.
    assert (paper["random"]["n"], paper["random"]["accuracy"]) == (2, 1.0)
    assert (vlm["random"]["n"], vlm["random"]["accuracy"]) == (2, 1.0)
    # popular: row 1 again (it names two settings) and "I cannot tell." to a no: the paper
    # reads it yes (no "no"/"not" word), VLMEvalKit reads it Unknown: wrong under both.
    assert (paper["popular"]["n"], paper["popular"]["accuracy"]) == (2, 0.5)
    assert vlm["popular"]["accuracy"] == 0.5
    # adversarial: the failure is an error, not a wrong answer; "yes" to a yes is right.
    assert (paper["adversarial"]["n"], paper["adversarial"]["n_errors"]) == (1, 1)
    assert paper["adversarial"]["accuracy"] == 1.0
    records = journal(out)
    assert len(records) == 6
    failed = next(r for r in records if r["id"] == "adversarial/2/paper")
    assert failed["response"]["error"] == f"VLMEvalKit: {FAIL}"
    info = load(out, "run.json")
    assert info["backend"]["model"] == "GPT4o"
    assert info["rescored_from"]["tool"] == "vlmevalkit"
    assert info["rescored_from"]["bad_lines"] == 1
    notes = flat(result.stdout + result.stderr)
    assert "GPT4o_POPE.tsv line 7: 2 cells where the header has 5; line skipped" in notes
    assert "1 failed in vlmevalkit's run" in notes


def test_folder_finds_the_predictions_and_not_the_judge_files(tmp_path):
    model = tmp_path / "work" / "M"
    write_tsv(model / "T1" / "M_POPE.tsv", POPE_HEADER, POPE_ROWS[:2])
    (model / "M_POPE.tsv").symlink_to(Path("T1") / "M_POPE.tsv")  # run.py's link
    write_tsv(model / "T1" / "M_POPE_gpt-4o-mini.tsv", POPE_HEADER, POPE_ROWS[:1])
    (model / "T1" / "M_POPE_score.csv").write_text("split,Overall\n")
    out = tmp_path / "run"
    result = rescore(tmp_path / "work", "--out", out)
    assert result.exit_code == 0, result.output
    assert len(journal(out)) == 3  # two rows, one of them in two settings; read once


def test_a_file_of_another_dataset_is_one_line(tmp_path):
    path = write_tsv(tmp_path / "M_MMBench_DEV_EN.tsv", POPE_HEADER, POPE_ROWS)
    result = rescore(path, "--out", tmp_path / "run")
    assert result.exit_code != 0
    assert "not a VLMEvalKit prediction file of a dataset visioneval re-scores" in \
        flat(result.stderr)
    assert "Traceback" not in result.output


MMVP_HEADER = ["index", "question", "A", "B", "answer", "category", "prediction"]


def test_mmvp_json_scored_by_vlmevalkit_with_its_pairs(tmp_path):
    rows = [  # json as `to_dict("records")` dumps it: numbers stay numbers, NaN for none
        {"index": 0, "question": "Are the feet visible?", "A": "Yes", "B": "No",
         "answer": "A", "category": float("nan"), "prediction": "A"},
        {"index": 1, "question": "Are the feet visible?", "A": "Yes", "B": "No",
         "answer": "B", "category": float("nan"), "prediction": "The answer is B."},
        {"index": 2, "question": "Is the door open?", "A": "Open", "B": "Closed",
         "answer": "A", "category": float("nan"), "prediction": "B"},
        {"index": 3, "question": "Is the door open?", "A": "Open", "B": "Closed",
         "answer": "B", "category": float("nan"), "prediction": FAIL},
    ]
    path = tmp_path / "M_MMVP.json"
    path.write_text(json.dumps(rows, indent=4))  # json.dump writes NaN, as VLMEvalKit's
    out = tmp_path / "run"
    result = rescore(path, "--out", out)
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert list(metrics["protocols"]) == ["vlmevalkit"]
    got = metrics["protocols"]["vlmevalkit"]["original"]
    # Index 1 and 2 right (a pair), Index 3 wrong, Index 4 failed: 2 of 3 questions,
    # one whole pair of one (the other is incomplete).
    assert (got["n"], got["n_errors"]) == (3, 1)
    assert got["accuracy"] == pytest.approx(2 / 3)
    assert (got["n_pairs"], got["pair_accuracy"], got["incomplete_pairs"]) == (1, 1.0, 1)
    ids = [r["id"] for r in journal(out)]
    assert ids == ["1/vlmevalkit", "2/vlmevalkit", "3/vlmevalkit", "4/vlmevalkit"]


def test_hallusionbench_tsv_scored_by_every_protocol(tmp_path):
    header = ["index", "category", "l2-category", "question", "answer", "prediction"]
    rows = [
        ["VD_illusion_1_0_0_0", "VD", "VD_illusion", "Is the left line longer?", "No",
         "No, they are equal."],
        ["VD_illusion_2_0_1_0", "VD", "VD_illusion", "Is the left line longer?", "Yes",
         "No."],
        ["VS_chart_1_3_1_0", "VS", "VS_chart", "Is 2020 the highest bar?", "Yes", FAIL],
        ["VD_illusion_x", "VD", "VD_illusion", "?", "Yes", "Yes"],
    ]
    out = tmp_path / "run"
    result = rescore(write_tsv(tmp_path / "M_HallusionBench.tsv", header, rows), "--out", out)
    assert result.exit_code == 0, result.output
    metrics = load(out)
    records = journal(out)
    assert [r["id"] for r in records] == ["VD_illusion_0_0_0", "VD_illusion_0_1_0",
                                          "VS_chart_3_1_0"]
    assert records[1]["metadata"]["visual_input"] == "2"
    assert records[2]["response"]["error"] == f"VLMEvalKit: {FAIL}"
    # "No, they are equal." to a no is right, "No." to a yes wrong, under every rule: aAcc
    # 1 of 2; the question asked on both figures is then wrong (qAcc 0); the easy pair
    # (original figure) right, the hard (edited) wrong.
    assert list(metrics["protocols"]) == ["paper", "lmms-eval", "vlmevalkit"]
    for protocol, got in metrics["protocols"].items():
        assert (got["n"], got["n_errors"]) == (2, 1), protocol
        assert (got["overall"]["aAcc"], got["overall"]["qAcc"]) == (0.5, 0.0), protocol
    paper = metrics["protocols"]["paper"]["overall"]
    assert (paper["easy"], paper["hard"]) == (1.0, 0.0)
    info = load(out, "run.json")
    assert info["sessions"][0]["skipped"] == 1


NB_HEADER = ["index", "question", "type", "answer", "prediction"]


def test_naturalbench_tsv_scored_under_both_harnesses(tmp_path):
    q = "Is the cat black?"
    rows = [["0", q, "yes_no", "Yes", "Yes"], ["1", q, "yes_no", "No", "no"],
            ["2", "Is the cat white?", "yes_no", "No", "No."],
            ["3", "Is the cat white?", "yes_no", "Yes", FAIL]]
    out = tmp_path / "run"
    result = rescore(write_tsv(tmp_path / "M_NaturalBenchDataset.tsv", NB_HEADER, rows),
                     "--out", out)
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert metrics["protocols"] == ["lmms-eval", "vlmevalkit"]
    vlm = metrics["results"]["original"]["vlmevalkit"]
    assert (vlm["n_items"], vlm["n_errors"], vlm["acc"]) == (3, 1, 1.0)
    assert vlm["incomplete_groups"] == 1
    assert journal(out)[0]["id"] == "0000/q0_i0/spaced"


@pytest.mark.skipif(importlib.util.find_spec("openpyxl") is not None,
                    reason="openpyxl is installed: the xlsx is read (next test)")
def test_xlsx_without_openpyxl_is_one_line(tmp_path):
    path = tmp_path / "M_POPE.xlsx"
    path.write_bytes(b"PK\x03\x04 not read")
    result = rescore(path, "--out", tmp_path / "run")
    assert result.exit_code != 0
    assert "install openpyxl or save VLMEvalKit's predictions as tsv" in flat(result.stderr)
    assert "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(importlib.util.find_spec("openpyxl") is None,
                    reason="openpyxl is not installed (the extra `vlmevalkit`)")
def test_xlsx_is_read_with_openpyxl(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(POPE_HEADER)
    for row in POPE_ROWS:
        sheet.append([int(row[0]), *row[1:]])
    book.save(tmp_path / "M_POPE.xlsx")
    out = tmp_path / "run"
    result = rescore(tmp_path / "M_POPE.xlsx", "--out", out)
    assert result.exit_code == 0, result.output
    assert len(journal(out)) == 6


def test_json_rows_without_prediction_and_a_torn_end_are_lines(tmp_path):
    rows = [dict(zip(NB_HEADER, r, strict=True)) for r in (
        ["0", "Is the cat black?", "yes_no", "Yes", "Yes"],
        ["1", "Is the cat black?", "yes_no", "No", "No"])]
    del rows[1]["prediction"]
    text = json.dumps(rows, indent=4)
    path = tmp_path / "M_NaturalBenchDataset.json"
    path.write_text(text[:-1] + ',\n    {"index": "2", "question": "Is the')  # cut short
    out = tmp_path / "run"
    result = rescore(path, "--out", out)
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in journal(out)] == ["0000/q0_i0/spaced"]
    notes = flat(result.stderr)
    assert "M_NaturalBenchDataset.json line 2: no prediction column" in notes
    assert "line 3: not JSON" in notes and "the rest of the file is not read" in notes
    assert load(out, "run.json")["rescored_from"]["bad_lines"] == 2
