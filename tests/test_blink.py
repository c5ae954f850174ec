"""BLINK: each reference implementation's answer reading on hand-made answers, the loader on
a Hub-shaped folder (real parquet in the real schema), and the command end to end against
the loopback server over real HTTP and with the builtin random model."""

from __future__ import annotations

import base64
import csv
import hashlib

import pyarrow.parquet as pq
import pytest
from cli_helpers import flat, invoke, load

from visioneval.benchmarks.blink import prompts, readings
from visioneval.benchmarks.blink.benchmark import build
from visioneval.benchmarks.blink.options import BlinkOptions
from visioneval.benchmarks.blink.questions import Question
from visioneval.benchmarks.blink.synth import split, write_synthetic
from visioneval.core.records import Sample, SkippedRow
from visioneval.loopback.server import Prompt

Q4 = Question("val_Counting_1", "Counting", "How many?", ("1", "2", "3", "4"), "(B)",
              "How many?\nSelect from the following choices.\n(A) 1\n(B) 2\n(C) 3\n(D) 4")
Q2 = Question("val_Jigsaw_1", "Jigsaw", "Which fits?", ("left", "right"), "(A)",
              "Which fits?\n(A) left\n(B) right")


# Expected verdicts from eval/test_benchmark.py lines 24-41 (zeyofu/BLINK_Benchmark 2d6a779).
@pytest.mark.parametrize(("text", "token"), [
    ("B", "(B)"),                        # line 27: a bare letter
    ("E", "(E)"),                        # line 27: all five letters, even with four options
    ("(C)", "(C)"),                      # line 29
    ("The answer is (B).", None),        # "(B)." is not the token "(B)": GPT-3.5's turn
    ("The answer is (B) 2", "(B)"),      # line 40: the one option token
    ("(A) or (B)?\n\nSo (B) it is", "(B)"),  # lines 37-39: the last paragraph wins
    ("(A) and (B)", None),               # line 31: two tokens, none alone at the end
    ("(a)", None),                       # case matters: the tokens are upper case
    ("A.", None),                        # not exactly a letter, no token
    ("b", None),
    ("", None),
    ("I cannot tell from the image.", None),
    ("<think>(A)? no</think> (B)", "(B)"),  # "(A)?" is no token; the reply's (B) is
    ("B\n", None),                       # no stripping: "B\n" is not "B"
])
def test_paper_reading(text, token):
    assert readings.paper(text, Q4).token == token


# Expected letters from lmms_eval/tasks/blink/utils.py lines 24-28 (lmms-eval 75571cfe).
@pytest.mark.parametrize(("text", "letter"), [
    ("B", "B"), ("(C) 3", "C"), (" a.", "A"), ("The answer is (B)", "T"),
    ("Based on the image, A", "B"), ("Yes, but (A)", "Y"), ("", ""), ("2", ""),
    ("<think>B</think>", ""),
])
def test_lmms_eval_reading(text, letter):
    assert readings.lmms_eval(text) == letter


# Expected letters from VLMEvalKit's can_infer (vlmeval/utils/matching_util.py, e8e78f05).
@pytest.mark.parametrize(("text", "letter"), [
    ("B", "B"), ("The answer is (B).", "B"), ("A or B", None), ("3", "C"),
    ("Sorry, I can't help with images of people yet.", "Z"), ("", None),
])
def test_vlmevalkit_reading(text, letter):
    assert readings.vlmevalkit(text, Q4) == letter


def test_prompts_follow_each_reference():
    assert prompts.paper(Q2).startswith("Disclaimer: This is not to make unfair assumptions")
    assert prompts.paper(Q4) == Q4.prompt  # no disclaimer for Counting
    assert prompts.lmms_eval(Q4).startswith("Note: You only need to respond with A, B, C, D "
                                            "without providing any additional information.\n")
    assert prompts.vlmevalkit(Q2) == ("Question: Which fits?\nOptions:\nA. left\nB. right\n"
                                      "Please select the correct answer from the options "
                                      "above. \n")


def test_loader_reads_a_hub_shaped_folder(tmp_path):
    counts = write_synthetic(tmp_path / "d", 28)
    assert counts == split(28) and sum(counts.values()) == 28
    assert split(1901)["Visual_Correspondence"] == 172  # the published counts
    table = pq.read_table(tmp_path / "d" / "Forensic_Detection" / "val-00000-of-00001.parquet")
    assert table.column("image_4").to_pylist()[0] is not None
    # A malformed row: an answer that is no option; one line names it, the run goes on.
    path = tmp_path / "d" / "Counting" / "val-00000-of-00001.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[0]["answer"] = "(F)"
    pq.write_table(pq.read_table(path).from_pylist(rows, schema=pq.read_schema(path)), path)
    bench = build({"data_dir": tmp_path / "d", "protocol": "paper"})
    made = list(bench.samples())
    skipped = [m for m in made if isinstance(m, SkippedRow)]
    assert len(skipped) == 1 and "'answer' is '(F)'" in skipped[0].reason
    samples = [m for m in made if isinstance(m, Sample)]
    assert len(samples) == 27
    forensic = next(s for s in samples if s.group == "Forensic_Detection")
    parts = forensic.messages[0].parts
    assert isinstance(parts[0], str) and len(parts) == 5  # text first, then the 4 images
    stored = pq.read_table(tmp_path / "d" / "Forensic_Detection" /
                           "val-00000-of-00001.parquet").to_pylist()[0]
    assert parts[1].data == stored["image_1"]["bytes"]  # the stored bytes, not re-encoded


def test_test_split_is_refused():
    with pytest.raises(ValueError, match="test answers are hidden"):
        BlinkOptions(split="test")


def answers(images: dict[str, str]):
    """A model that knows each question's answer by its first image's bytes and answers in
    a verbose style: 'The answer is (X)' (lmms-eval reads T)."""
    def answer(prompt: Prompt) -> str:
        digest = hashlib.sha256(base64.b64decode(prompt.images[0])).hexdigest()
        return f"Looking closely.\n\nThe answer is {images[digest]} here"
    return answer


def test_every_protocol_against_the_loopback_server(serve, tmp_path):
    write_synthetic(tmp_path / "d", 28)
    truth = {}
    for path in (tmp_path / "d").rglob("*.parquet"):
        for row in pq.read_table(path).to_pylist():
            digest = hashlib.sha256(row["image_1"]["bytes"]).hexdigest()
            truth.setdefault(digest, row["answer"])  # two questions share a first image
    server = serve(answer=answers(truth))
    out = tmp_path / "run"
    result = invoke("blink", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", tmp_path / "d", "--out", out,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 28 * 3
    metrics = load(out)
    paper = metrics["protocols"]["paper"]["original"]
    assert paper["n"] == 28 and paper["n_tasks"] == 14
    shared = sum((n + 1) // 2 for n in split(28).values())  # pairs share a first image
    assert paper["macro_ci95_clusters"] == "image" and paper["macro_ci95_n_clusters"] == shared
    lmms = metrics["protocols"]["lmms-eval"]["original"]
    assert lmms["micro"] == 0.0  # every answer starts "L": never an option
    assert metrics["protocols"]["lmms-eval"]["unparsed"] == {
        "a first letter that is no option (scored wrong)": 28}
    notes = {(n["protocol"], n["cause"]) for n in metrics["differences"]["notes"]}
    assert ("vlmevalkit", "aggregation") in notes
    rows = list(csv.DictReader((out / "results.csv").read_text().splitlines()))
    assert rows[0]["task"] == "mean of tasks"
    assert "BLINK (val): m, accuracy (percent)" in flat(result.output)
    assert "Why the protocols differ" in (out / "report.html").read_text()


def test_random_baseline_offline(tmp_path):
    write_synthetic(tmp_path / "d", 14)
    out = tmp_path / "run"
    result = invoke("blink", "--backend", "builtin", "--model", "random", "--data-dir",
                    tmp_path / "d", "--out", out, "--no-progress", "--tasks",
                    "Counting,IQ_Test")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert metrics["protocols"]["paper"]["original"]["n"] == 2
    assert set(metrics["protocols"]["paper"]["original"]["per_task"]) == {"Counting",
                                                                          "IQ_Test"}


def test_explains_units_give_each_protocols_headline():
    """`visioneval explain`'s units: strata are tasks for the mean of task accuracies, one
    for VLMEvalKit's mean over questions; a failed request and the judged readings add
    nothing; answers on one image are drawn together."""
    from visioneval.benchmarks.blink import metrics, scoring
    from visioneval.core.gap import GapHeadlines
    from visioneval.core.records import Record, Response
    from visioneval.harness.gapboot import UnitTable

    protocols = ["paper", "lmms-eval", "vlmevalkit"]
    asked = [("c1", "Counting", "img1", "(A)", "(B)", "B"), ("c2", "Counting", "img1", "(B)",
                                                              "(B)", "B"),
             ("c3", "Counting", "img2", "(A)", "(A)", None), ("j1", "Jigsaw", "img3", "(A)",
                                                               "(A)", "A")]
    records = []
    for idx, task, image, answer, corrected, said in asked:
        q = Question(idx, task, "Which?", ("one", "two"), answer, "Which?")
        for p in protocols:
            meta = {"prompt": p, "task": task, "image": image, "corrected": corrected}
            if said is None and p == "vlmevalkit":
                records.append(Record(id=f"{idx}/{p}", group=task, target=answer,
                                      metadata=meta, response=Response(error="HTTP 500")))
                continue
            text = said or "A"
            parsed, scores = scoring.score(p, text, q, corrected, protocols)
            scores["paper+judge"] = {"correct": 1.0}
            records.append(Record(id=f"{idx}/{p}", group=task, target=answer, metadata=meta,
                                  response=Response(text=text), parsed=parsed, scores=scores))
    label_sets = ["original", "corrected"]
    units = list(metrics.question_units(records, protocols, label_sets))
    assert len(units) == 11  # 12 answers, one failed
    assert all(key[0] in protocols for u in units for key in u.shares)
    assert {u.cluster for u in units} == {"image img1", "image img2", "image img3"}
    summary = metrics.summarize(records, protocols, label_sets)["protocols"]
    table = UnitTable(GapHeadlines("val", "paper").weights)
    table.add("", units)
    for p in protocols:
        for labels in label_sets:
            reported = summary[p][labels]["micro" if p == "vlmevalkit" else "macro"]
            assert table.value(("", (p, labels))) == pytest.approx(100 * reported)
    # Counting 2/3 and Jigsaw 1/1: the paper's macro 5/6, not micro 3/4; c1's corrected
    # label (B) makes Counting 3/3
    assert summary["paper"]["original"]["macro"] == pytest.approx(5 / 6)
    assert summary["paper"]["original"]["micro"] == pytest.approx(3 / 4)
    assert summary["paper"]["corrected"]["macro"] == pytest.approx(1.0)
    assert summary["vlmevalkit"]["original"]["micro"] == pytest.approx(2 / 3)  # c3 failed
