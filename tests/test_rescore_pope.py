"""`visioneval rescore --from lmms-eval` on POPE logs in lmms-eval's own format: the per-setting
tasks read from the log alone (label and question_id are in `pope_accuracy`, utils.py lines
17-28 at 75571cf), the pooled task `pope` joined with the test split (--data-dir), a failed
request an error, lmms-eval's own score checked, lmms-eval's protocol only."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from lmms_logs import line, write

from visioneval.benchmarks.pope.benchmark import prompt
from visioneval.benchmarks.pope.synth import write_synthetic
from visioneval.io.parquet import iter_rows

FAILED = "[LMMS_EVAL_REQUEST_FAILED after 3 retries] timeout"


@pytest.fixture(scope="module")
def pope_data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pope") / "data"
    write_synthetic(out, 2)
    return out


def rows(files: list[Path]) -> list[dict]:
    return [r.values for r in iter_rows(files, ("question_id", "question", "answer",
                                                "category"))]


def log(version: str, data: list[dict], answers: dict[int, str]) -> list[dict]:
    """lmms-eval's lines for these doc_ids: its prompt, its exact-match score."""
    out = []
    for doc_id, text in answers.items():
        doc = data[doc_id]
        gt = doc["answer"]
        pred = text.lower().strip()
        field = {"question_id": doc["question_id"], "score": float(pred == gt),
                 "prediction": pred, "ground_truth": gt}
        out.append(line(version, doc_id, gt, text, prompt("lmms-eval", doc["question"]),
                        {f"pope_{m}": field for m in ("accuracy", "precision", "recall",
                                                      "f1_score", "yes_ratio")},
                        doc={k: v for k, v in doc.items()}))
    return out


def test_per_setting_tasks_from_the_log_alone(pope_data, tmp_path):
    adversarial = rows(sorted((pope_data / "Full").glob("adversarial-*.parquet")))
    random_ = rows(sorted((pope_data / "Full").glob("random-*.parquet")))
    logs = tmp_path / "logs" / "m"
    write(logs / "20260801_000000_samples_pope_adv.jsonl",
          log("0.7", adversarial, {0: "Yes", 1: "No.", 2: "yes", 3: FAILED, 4: "no"}))
    write(logs / "20260801_000000_samples_pope_random.jsonl",
          log("0.4", random_, {0: "Yes, there is one.", 1: "no"}))
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", out)
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert list(k for k in metrics if k in ("paper", "lmms-eval", "vlmevalkit")) == \
        ["lmms-eval"]
    adv = metrics["lmms-eval"]["original"]["settings"]["adversarial"]
    labels = [d["answer"] for d in adversarial[:5]]
    right = [labels[0] == "yes", False, labels[2] == "yes", labels[4] == "no"]
    assert adv["n"] == 4 and adv["n_errors"] == 1
    assert adv["accuracy"] == pytest.approx(sum(right) / 4)
    assert adv["unparsed"] == 1  # "No." is not exactly "no": out of precision and recall
    rand = metrics["lmms-eval"]["original"]["settings"]["random"]
    assert rand["unparsed"] == 1 and rand["n"] == 2
    records = journal(out)
    assert {r["id"] for r in records} >= {"adversarial/1/lmms-eval", "random/2/lmms-eval"}
    first = next(r for r in records if r["id"] == "adversarial/1/lmms-eval")
    assert first["metadata"]["image"] == "image 1 of the files"  # no data: six an image
    info = load(out, "run.json")
    assert info["generation"]["max_tokens"] == 128
    notes = flat(result.stdout + result.stderr)
    assert "lmms-eval's own score agrees with the same rule here on 6 of 6 answers" in notes


def test_the_pooled_task_needs_the_test_split(pope_data, tmp_path):
    test_rows = rows(sorted((pope_data / "data").glob("test-*.parquet")))
    logs = tmp_path / "logs"
    write(logs / "20260801_000000_samples_pope.jsonl",
          log("0.7", test_rows, {0: "Yes", 13: "no", 20: "No", 35: "yes"}))
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs, "--out", out, "--data-dir",
                    pope_data)
    assert result.exit_code == 0, result.output
    by_id = {r["id"]: r for r in journal(out)}
    settings = [test_rows[i]["category"] for i in (0, 13, 20, 35)]
    qids = [test_rows[i]["question_id"] for i in (0, 13, 20, 35)]
    assert set(by_id) == {f"{s}/{q}/lmms-eval" for s, q in zip(settings, qids, strict=True)}
    assert all(r["metadata"]["image"].startswith(("COCO_val2014_", "synthetic_"))
               for r in by_id.values())
    pooled = load(out)["lmms-eval"]["original"]["pooled"]
    assert pooled["n"] == 4
    # Without the data, the pooled task cannot say a question's setting (v0.4 on keeps no doc).
    bare = invoke("rescore", "--from", "lmms-eval", logs, "--out", tmp_path / "bare")
    assert "give --data-dir with the Hub copy" in flat(bare.stderr)
