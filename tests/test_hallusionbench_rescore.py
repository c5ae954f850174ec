"""`visioneval rescore --from lmms-eval` on hallusion_bench_image logs in lmms-eval's own
formats: each line keeps its question's row under aAcc/fAcc/qAcc (lmms_eval/tasks/
hallusion_bench/evaluate_hb.py:42-45) and, before v0.4, in `doc`; the answers are scored
under every protocol without reading any data."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from lmms_logs import line, write

from visioneval.benchmarks.hallusionbench import rules

FAILED = "[LMMS_EVAL_REQUEST_FAILED after 3 retries] timeout"


def row(category: str, sub: str, figure: str, question: str, answer: str) -> dict:
    return {"category": category, "subcategory": sub,
            "visual_input": "1" if figure == "0" or category == "VS" else "2",
            "set_id": "0", "figure_id": figure, "sample_note": "n", "question_id": question,
            "question": f"Is mark {question} larger?",
            "gt_answer_details": "Yes, it is." if answer == "1" else "No, it is not.",
            "gt_answer": answer, "filename": f"./{category}/{sub}/0_{figure}.png"}


ROWS = [row("VD", "illusion", "0", "0", "1"), row("VD", "illusion", "0", "1", "0"),
        row("VD", "illusion", "1", "0", "0"), row("VD", "illusion", "1", "1", "1"),
        row("VS", "chart", "1", "0", "1"), row("VS", "chart", "2", "0", "0")]
ANSWERS = ["Yes.", "No", "**No**", "Yes, it is.", FAILED, "No, it is smaller."]


def logs(folder: Path, version: str) -> Path:
    lines = []
    for doc_id, (found, said) in enumerate(zip(ROWS, ANSWERS, strict=True)):
        kept = found | {"model_prediction": said}
        lines.append(line(version, doc_id, found["gt_answer_details"], said, found["question"],
                          {"aAcc": kept, "fAcc": kept, "qAcc": kept}, doc=found))
    lines.append('{"doc_id": 9, "filtered_resps": ["Yes"], "aAcc": {"category": "VD"}}')
    lines.append("not json")
    write(folder / "20260301_120000_samples_hallusion_bench_image.jsonl", lines)
    return folder


@pytest.mark.parametrize("version", ["0.3", "0.7"])
def test_lmms_eval_answers_are_scored_under_every_protocol(tmp_path, version):
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs(tmp_path / "logs", version),
                    "--out", out)
    assert result.exit_code == 0, result.output
    records = journal(out)
    assert [r["id"] for r in records] == ["VD_illusion_0_0_0", "VD_illusion_0_0_1",
                                          "VD_illusion_0_1_0", "VD_illusion_0_1_1",
                                          "VS_chart_0_1_0", "VS_chart_0_2_0"]
    failed = records[4]
    assert failed["response"]["error"].startswith("lmms-eval: [LMMS_EVAL_REQUEST_FAILED")
    for record, said, found in zip(records, ANSWERS, ROWS, strict=True):
        if said == FAILED:
            continue
        word = rules.yes_no(said)  # "**No**" is no word: Unknown, wrong everywhere
        right = float(rules.vlmevalkit_correct(word, found["gt_answer"]))
        assert record["scores"]["vlmevalkit"]["correct"] == right, record["id"]
        assert record["scores"]["paper"]["correct"] == right
        assert record["scores"]["lmms-eval"]["correct"] == right
    metrics = load(out)
    vlm = metrics["protocols"]["vlmevalkit"]
    assert vlm["n"] == 5 and vlm["n_errors"] == 1 and vlm["unclear"] == 1
    # VD figure 0: both right; figure 1: "**No**" wrong; the VS figures hold the failed
    # request (figure 1) and a right answer (figure 2).
    assert vlm["overall"]["n_fAcc"] == 3 and vlm["overall"]["fAcc"] == pytest.approx(2 / 3)
    assert vlm["overall"]["incomplete"] == 2  # VS figure 1 and its question group
    info = load(out, "run.json")
    assert info["rescored_from"]["tool"] == "lmms-eval"
    assert info["rescored_from"]["checks"]["prompts_not_the_question"] == 0
    assert info["rescored_from"]["checks"]["targets_not_the_details"] == 0
    assert info["rescored_from"]["bad_lines"] == 1  # "not json"
    assert info["counts"]["skipped_rows"] == 1  # doc_id 9: a row without its fields
    said = flat(result.stdout + result.stderr)
    assert "doc_id 9" in said and "column 'subcategory' is empty or not text" in said
    assert "the paper's protocol is scored here on those only" in said
    shown = invoke("show", out)
    assert shown.exit_code == 0 and "vlmevalkit" in shown.stdout
