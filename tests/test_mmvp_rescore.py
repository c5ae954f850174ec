"""`visioneval rescore --from lmms-eval` on MMVP logs in lmms-eval's own format: the fields its
mmvp task logs (utils.py `mmvp_process_results`, lines 150-184: a 0-based `index`, `gt`,
`pred_letter`, `is_correct` under both metric names), questions read back from the logged
prompt, lmms-eval's labels from the log and the published and corrected ones from them, its
own verdicts checked, a failed request an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from lmms_logs import line, results_file, write

from visioneval.benchmarks.mmvp.lmms_eval import question_from
from visioneval.benchmarks.mmvp.prompts import lmms_eval as lmms_prompt
from visioneval.benchmarks.mmvp.questions import Question
from visioneval.benchmarks.mmvp.readings import lmms_eval as lmms_letter

FAILED = "[LMMS_EVAL_REQUEST_FAILED after 3 retries] timeout"
# (Index, question, options, lmms-eval's label): its copy relabels 99 and 100.
DOCS = [(1, "Are the butterfly's wings closer to being open or closed?", "(a) Open (b) Closed",
         "A"),
        (2, "Are the butterfly's wings closer to being open or closed?", "(a) Open (b) Closed",
         "B"),
        (99, "Does the elephant have long or short tusks?", "(a) Long (b) Short", "B"),
        (100, "Does the elephant have long or short tusks?", "(a) Long (b) Short", "A")]


def logged(doc_id: int, index: int, question: str, options: str, gt: str, text: str) -> dict:
    prompt = lmms_prompt(Question(index, question, options, f"({gt.lower()})"))
    pred = lmms_letter(text)
    result = {"index": index - 1, "pair_index": (index - 1) // 2, "pred": text,
              "pred_letter": pred, "gt": gt, "is_correct": pred == gt}
    return line("0.7", doc_id, gt, text, prompt,
                {"mmvp_accuracy": result, "mmvp_pair_accuracy": result},
                tokens={"input_tokens": 90, "output_tokens": 2})


def logs(folder: Path) -> Path:
    answers = ["A", "B", "A", FAILED]  # 99: A against lmms-eval's B; 100 failed
    lines = [logged(doc, *d, text) for doc, (d, text) in enumerate(zip(DOCS, answers,
                                                                        strict=True))]
    lines.append("{not json")
    write(folder / "20260301_000000_samples_mmvp.jsonl", lines)
    results_file(folder, "20260301_000000", {"mmvp": {"generation_kwargs": {
        "max_new_tokens": 16, "temperature": 0, "do_sample": False}, "_n": {
        "original": 300, "effective": 4}}})
    return folder


def test_question_read_back_from_lmms_evals_prompt():
    q = Question(1, "Is it? Really?", "(a) Yes (b) No", "(a)")
    assert question_from(lmms_prompt(q), 1, "a") == q
    assert question_from("Something else entirely", 1, "a") is None


def test_lmms_eval_log_rescored_under_its_labels_and_the_corrected_ones(tmp_path):
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs(tmp_path / "logs" / "m"), "--out",
                    out, "--no-report")
    assert result.exit_code == 0, result.output
    assert "samples_mmvp.jsonl line 5: not JSON" in flat(result.output)
    metrics = load(out)
    assert list(metrics["protocols"]) == ["lmms-eval"]
    own = metrics["protocols"]["lmms-eval"]["original"]
    assert (own["n"], own["n_errors"]) == (3, 1)
    assert own["accuracy"] == pytest.approx(2 / 3)  # 1 and 2 right, 99 wrong (A, label B)
    assert (own["n_pairs"], own["pair_accuracy"]) == (1, 1.0)  # pair 50 lost 100
    corrected = metrics["protocols"]["lmms-eval"]["corrected"]
    assert corrected["accuracy"] == 1.0  # 99 keeps its published (a) in visioneval's labels
    records = {r["id"]: r for r in journal(out)}
    elephant = records["99/lmms-eval"]
    assert elephant["target"] == {"published": "a", "lmms_eval": "b", "corrected": "a"}
    assert elephant["metadata"]["question"] == "Does the elephant have long or short tusks?"
    assert elephant["metadata"]["options"] == "(a) Long (b) Short"
    assert elephant["metadata"]["lmms_eval"]["doc_id"] == 2
    assert records["100/lmms-eval"]["response"]["error"].startswith("lmms-eval: [LMMS_EVAL")
    info = load(out, "run.json")
    assert info["generation"] == {"temperature": 0, "max_tokens": 16, "seed": None}
    checks = info["rescored_from"]["checks"]
    assert checks["lmms_eval_score"] == {"compared": 3, "differ": 0}
    assert checks["prompts_not_verbatim"] == 0
    assert "is_correct agrees" in flat(result.output)
