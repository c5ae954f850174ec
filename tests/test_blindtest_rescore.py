"""`visioneval rescore --from lmms-eval` on BlindTest logs in lmms-eval's own format: the
fields its vlmsareblind task logs (utils.py `vlmsareblind_process_results`, lines 78-93:
`accuracy` and `accuracy_by_task` = {task, is_correct}), the label from `target`; its own
verdicts checked against the same rule here; lmms-eval's task_mean drop shown; a failed
request an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from lmms_logs import line, results_file, write

from visioneval.benchmarks.blindtest import protocols

SUFFIX = "\nAnswer only in the required format."
FAILED = "[LMMS_EVAL_REQUEST_FAILED after 3 retries] timeout"
# (task as logged, prompt, label, answer)
DOCS = [("Touching Circles", "Are the two circles touching each other? Answer with Yes/No.",
         "Yes", "Yes"),
        ("Touching Circles", "Are the two circles overlapping? Answer with Yes/No.", "No",
         "No."),
        ("Line Plot Intersections", "Count the intersection points where the blue and red "
         "lines meet. Put your answer in curly brackets, e.g., {2}.", "2", "{1}"),
        ("Nested Squares", "How many squares are in the image? Please answer with a number "
         "in curly brackets e.g., {10}.", "3", FAILED)]


def logs(folder: Path) -> Path:
    lines: list = []
    for doc_id, (task, prompt, label, text) in enumerate(DOCS):
        right = protocols.correct("lmms-eval", task, protocols.lmms_reading(task, text), label)
        lines.append(line("0.7", doc_id, label, text, prompt + SUFFIX, {
            "accuracy": float(right), "accuracy_by_task": {"task": task, "is_correct": right}},
            tokens={"input_tokens": 120, "output_tokens": 3}))
    lines.append("{not json")
    write(folder / "20260301_000000_samples_vlmsareblind.jsonl", lines)
    results_file(folder, "20260301_000000", {"vlmsareblind": {"generation_kwargs": {
        "max_new_tokens": 32, "temperature": 0, "do_sample": False}}})
    return folder


def test_lmms_eval_log_rescored_with_its_task_mean(tmp_path):
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs(tmp_path / "logs" / "m"), "--out",
                    out, "--no-report")
    assert result.exit_code == 0, result.output
    assert "samples_vlmsareblind.jsonl line 5: not JSON" in flat(result.output)
    assert "agrees with lmms-eval's rule here on 3 of 3" in flat(result.output)
    metrics = load(out)
    own = metrics["lmms-eval"]["original"]
    assert (own["accuracy"]["n"], own["accuracy"]["n_errors"]) == (3, 1)
    assert own["accuracy"]["accuracy"] == pytest.approx(1 / 3)  # "No." is not "no"
    assert own["tasks"]["Touching Circles"]["accuracy"] == 0.5
    assert own["dropped"] == ["Line Plot Intersections"]
    assert own["lmms_task_mean"] == pytest.approx(0.5)  # line plots left out
    assert own["task_mean"]["accuracy"] == pytest.approx(0.25)
    records = {r["id"]: r for r in journal(out)}
    assert records["valid/1/lmms-eval"]["metadata"]["prompt"].endswith("Answer with Yes/No.")
    assert records["valid/3/lmms-eval"]["response"]["error"].startswith("lmms-eval: [LMMS")
    info = load(out, "run.json")
    assert info["generation"] == {"temperature": 0, "max_tokens": 32, "seed": None}
