"""`visioneval rescore --from vlmevalkit` for CV-Bench, end to end: VLMEvalKit's CV-Bench-2D
and CV-Bench-3D prediction files (tsv, xlsx through openpyxl) made from the columns its
`CVBench` class reads (vlmeval/dataset/image_mcq.py:1185-1300 at e8e78f05). Each hand-made
answer's verdict is derived from VLMEvalKit's code, named beside it."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load

HEADER = ["index", "question", "prompt", "A", "B", "C", "answer", "category", "split",
          "source", "prediction"]
COUNT = "How many chairs are in the image? Select from the following choices.\n(A) 3\n" \
        "(B) 2\n(C) 1"
DEPTH = "Which is closer to the camera?\n(A) the lamp\n(B) the sofa"
TWO_D = [  # (source, gold, prediction, verdict without a judge: `can_infer`,
    #         vlmeval/utils/matching_util.py:124-127)
    ("ADE20K", "B", "B", 1.0),  # one option letter (matching_util.py:52)
    ("COCO", "A", "(C)", 0.0),  # reads C (brackets become spaces, line 40-44): wrong
    ("COCO", "A", "The answer is A.", 1.0),  # "A" the 4th of 4 tokens (line 52)
    ("COCO", "C", "Failed to obtain answer: CUDA out of memory", None),  # SKIP_ERR's error
]
THREE_D = [
    ("Depth", "A", "the lamp", 1.0),  # the one option text in it (lines 107-121)
    ("Distance", "B", "The lamp is closer than the sofa", 0.0),  # both texts: the judge's
    # turn, "Z" without one (multiple_choice.py:382-383): wrong
    ("Depth", "B", "Failed to obtain answer via API.", None),  # an API failure: an error
]


def two_d_rows() -> list[list[str]]:
    return [[str(i), "How many chairs?", COUNT, "3", "2", "1", gold, "Count", "2D", source,
             answer] for i, (source, gold, answer, _) in enumerate(TWO_D)]


def three_d_rows() -> list[list[str]]:
    return [[str(i), "Which is closer?", DEPTH, "the lamp", "the sofa", "", gold, task, "3D",
             "Omni3D", answer] for i, (task, gold, answer, _) in enumerate(THREE_D)]


def write_tsv(path: Path, rows: list[list[str]]) -> Path:
    """As pandas' `to_csv(sep="\\t", quoting=csv.QUOTE_ALL)` writes it (vlmeval/smp/file.py
    `dump_tsv`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def check_run(out: Path) -> None:
    metrics = load(out)
    block = metrics["results"]["original"]["vlmevalkit"]
    assert (block["n"], block["n_errors"]) == (5, 2)
    # CV-Bench-2D's Overall: the mean of the source accuracies (image_mcq.py:1279-1298):
    # ADE20K 1/1, COCO 1/2
    assert block["overall_2d"] == pytest.approx((1.0 + 0.5) / 2)
    # CV-Bench-3D: report_acc's Overall, the mean over rows (multiple_choice.py:90): 1/2
    assert block["overall_3d"] == pytest.approx(0.5)
    assert block["per_task"]["Depth"] == {"n": 1, "accuracy": 1.0}
    assert block["per_task"]["Distance"] == {"n": 1, "accuracy": 0.0}
    records = {r["id"]: r for r in journal(out)}
    for kind, answers in (("2D", TWO_D), ("3D", THREE_D)):
        for i, (_, _, _, verdict) in enumerate(answers):
            record = records[f"{kind}/{i}/vlmevalkit"]
            if verdict is None:
                assert record["response"]["error"].startswith("VLMEvalKit: Failed"), record
            else:
                assert record["scores"]["vlmevalkit"]["correct"] == verdict, record
    # VLMEvalKit sends the dataset prompt alone (image_mcq.py:1221-1222)
    assert records["3D/0/vlmevalkit"]["prompt"][0]["parts"] == [DEPTH]


def test_vlmevalkit_tsv_files_of_both_datasets(tmp_path):
    folder = tmp_path / "outputs" / "GPT4o" / "T20260801_Gabc"
    write_tsv(folder / "GPT4o_CV-Bench-2D.tsv",
              two_d_rows() + [["9", "?", COUNT, "3", "2", "1", "A", "Count", "2D", "Omni3D",
                               "A"]])
    write_tsv(folder / "GPT4o_CV-Bench-3D.tsv", three_d_rows())
    (folder / "GPT4o_CV-Bench-2D_acc.csv").write_text("split,ADE20K,COCO,Overall\n")
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "vlmevalkit", tmp_path / "outputs", "--out", out,
                    "--no-report")
    assert result.exit_code == 0, result.output
    check_run(out)
    metrics = load(out)
    assert list(metrics["results"]["original"]) == ["vlmevalkit"]
    info = load(out, "run.json")
    assert info["backend"]["model"] == "GPT4o"
    assert info["rescored_from"]["tool"] == "vlmevalkit"
    notes = flat(result.stdout + result.stderr)
    assert "source 'Omni3D' is not one of CV-Bench-2D's" in notes
    assert "the paper's and lmms-eval's add their own instruction and are not scored" in notes


@pytest.mark.skipif(importlib.util.find_spec("openpyxl") is None,
                    reason="openpyxl is not installed (the extra `vlmevalkit`)")
def test_vlmevalkit_xlsx_read_with_openpyxl(tmp_path):
    import openpyxl

    for name, rows in (("M_CV-Bench-2D.xlsx", two_d_rows()),
                       ("M_CV-Bench-3D.xlsx", three_d_rows())):
        book = openpyxl.Workbook()
        sheet = book.active
        sheet.append(HEADER)
        for row in rows:  # xlsxwriter stores numbers as numbers, an empty cell as none
            sheet.append([int(row[0]), *(cell or None for cell in row[1:])])
        book.save(tmp_path / name)
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "vlmevalkit", tmp_path / "M_CV-Bench-2D.xlsx",
                    tmp_path / "M_CV-Bench-3D.xlsx", "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    check_run(out)
