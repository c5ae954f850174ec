"""`visioneval rescore --from lmms-eval` on NaturalBench logs in lmms-eval's own format:
docs numbered as lmms-eval numbers them (Index i is item i % 4 of group i // 4,
lmms_eval/tasks/naturalbench/utils.py:187-195), its spaced prompt (utils.py:152-158)
scored under lmms-eval's and VLMEvalKit's protocols, the answer column where the log keeps
the doc, the logged extraction (`naturalbench_G_ACC`'s score) checked, a failed request an
error."""

from __future__ import annotations

import pytest
from cli_helpers import invoke, journal, load
from lmms_logs import line, write

from visioneval.benchmarks.naturalbench.protocols import extract_answer, prompt

QUESTIONS = [("Is the cat black?", "Is the cat white?", "yes_no"),
             ("What is he holding?\nOption: A:a cup; B:a phone;",
              "What is he holding?\nOption: A:a phone; B:a cup;", "multiple_choice")]
LAYOUT = {"yes_no": ["Yes", "No", "No", "Yes"], "multiple_choice": ["A", "B", "B", "A"]}
# Answers per doc: group 0 right but one, group 1 all right but for doc 6 (a failure).
ANSWERS = ["Yes", "No, it is white.", "no", "Yes.", "A", "B", "", "There is a phone: A"]


def lines(version: str) -> list[dict]:
    out = []
    for index, text in enumerate(ANSWERS):
        q0, q1, qtype = QUESTIONS[index // 4]
        question = q0 if index % 4 < 2 else q1
        doc = {"Index": index, "Question": question, "Question_Type": qtype,
               "answer": LAYOUT[qtype][index % 4]}
        code = extract_answer(text, qtype)
        metrics = {k: {"id": index, "score": code} for k in
                   ("naturalbench_G_ACC", "naturalbench_Q_ACC", "naturalbench_I_ACC",
                    "naturalbench_Acc")}
        out.append(line(version, index, doc["answer"], text,
                        prompt(question, qtype, "spaced"), metrics, doc=doc))
    return out


@pytest.mark.parametrize("version", ["0.3", "0.4"])
def test_lmms_eval_logs_rescored_under_both_harnesses(tmp_path, version):
    logs = write(tmp_path / "logs" / "m" / "20250101_samples_naturalbench.jsonl",
                 lines(version))
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert metrics["protocols"] == ["lmms-eval", "vlmevalkit"]
    # 0.3 keeps the doc (its answer column too); 0.4 drops it: the fixed layout only
    assert metrics["label_sets"] == (["original", "corrected"] if version == "0.3"
                                     else ["original"])
    vlm = metrics["results"]["original"]["vlmevalkit"]
    # group 0: "Yes" right, "No, it is white." right, "no" right, "Yes." right: 4 of 4;
    # group 1: "A" right, "B" right, failed, "There is a phone: A" reads the article "a"
    # as A: right. 7 of 7 scored answers; group 1 is not whole.
    assert (vlm["n_items"], vlm["n_errors"], vlm["acc"]) == (7, 1, 1.0)
    assert (vlm["n_groups"], vlm["g_acc"], vlm["incomplete_groups"]) == (1, 1.0, 1)
    assert "acc" not in metrics["results"]["original"]["lmms-eval"]
    ids = [r["id"] for r in journal(out)]
    assert ids[:2] == ["0000/q0_i0/spaced", "0000/q0_i1/spaced"]
    info = load(out, "run.json")
    checks = info["rescored_from"]["checks"]
    assert checks["lmms_eval_extraction"] == {"compared": 8, "differ": 0}  # "" reads -1
    assert checks["prompt_families"] == {"spaced": 8}
    assert checks["prompts_checked_verbatim"] == (8 if version == "0.3" else 0)
