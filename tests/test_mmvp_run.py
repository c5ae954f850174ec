"""MMVP end to end: the loader on folders in the Hub's two layouts (made here in their real
schemas), the real command against the loopback server over real HTTP with a scripted model,
the offline random baseline, the image-free control, the dry run and the published numbers."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load

from visioneval.benchmarks.mmvp.benchmark import build
from visioneval.benchmarks.mmvp.synth import draw, write_parquet, write_synthetic
from visioneval.core.records import Sample, SkippedRow
from visioneval.loopback.server import Prompt

# Real rows of MMVP's Questions.csv (as quoted in tsb0601/MMVP#14 and in PixMMVP's copy):
# options with a leading space, quotes inside options, the pairs lmms-eval relabels.
ROWS = [
    (63, "Is the following statement correct: In the image, there is one daisy that is under "
         "the shadow of a taller daisy.", " (a) Correct (b) Incorrect", "(a)"),
    (64, "Is the following statement correct: In the image, there is one daisy that is under "
         "the shadow of a taller daisy.", " (a) Correct (b) Incorrect", "(b)"),
    (99, "Does the elephant have long or short tusks?", "(a) Long (b) Short", "(a)"),
    (100, "Does the elephant have long or short tusks?", "(a) Long (b) Short", "(b)"),
    (201, "What are the words in the image:", '(a) "Happy Easter" (b) "Happy Easter!"', "(a)"),
    (202, "What are the words in the image:", '(a) "Happy Easter" (b) "Happy Easter!"', "(b)"),
    (279, "Is the elderly person standing or sitting in the picture?",
     "(a) Standing (b) Sitting", "(a)"),
    (280, "Is the elderly person standing or sitting in the picture?",
     "(a) Standing (b) Sitting", "(b)"),
]


def official(folder: Path, rows=ROWS, bad: bool = False) -> Path:
    """Questions.csv and `MMVP Images/<Index>.jpg`, as MMVP/MMVP holds them."""
    images = folder / "MMVP Images"
    images.mkdir(parents=True, exist_ok=True)
    lines = [list(r) for r in rows]
    for index, *_ in rows:
        (images / f"{index}.jpg").write_bytes(draw(index, 0))
    if bad:
        lines += [["x", "Q?", "(a) X (b) Y", "(a)"], [7, "Q?", "(a) X (b) Y", "(a)"],
                  [9, "Q?", "X or Y", "(a)"], [63, "Again?", "(a) X (b) Y", "(a)"]]
        (images / "9.jpg").write_bytes(draw(9, 0))
    with open(folder / "Questions.csv", "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["Index", "Question", "Options", "Correct Answer"])
        out.writerows(lines)
    return folder


def truth(index: int, labels: str = "published") -> str:
    """The right letter of a ROWS question under a label set."""
    published = "a" if index % 2 else "b"
    changed = {"lmms-eval": {99: "b", 100: "a", 279: "b", 280: "a"},
               "corrected": {100: "a", 279: "b", 280: "a"}}.get(labels, {})
    return changed.get(index, published)


def test_loader_reads_the_hub_layout_and_skips_bad_rows_with_their_line(tmp_path):
    bench = build({"data_dir": official(tmp_path / "d", bad=True)})
    made = list(bench.samples())
    skipped = [m for m in made if isinstance(m, SkippedRow)]
    assert {s.row: s.reason for s in skipped} == {
        "Questions.csv line 10": "Index 'x' is not a whole number from 1",
        "Questions.csv line 11": "MMVP Images/7.jpg: no such file",
        "Questions.csv line 12": "Options 'X or Y' does not hold two options (a) ... (b) ...",
        "Questions.csv line 13": "Index 63 appears twice"}
    assert all(s.samples == 3 for s in skipped)  # each stands for its three prompts
    samples = [m for m in made if isinstance(m, Sample)]
    assert [s.id for s in samples[:3]] == ["63/paper", "63/lmms-eval", "63/vlmevalkit"]
    paper = samples[0]
    image, text = paper.messages[0].parts
    assert text == ROWS[0][1] + "  (a) Correct (b) Incorrect"  # the stored space kept
    stored = (tmp_path / "d" / "MMVP Images" / "63.jpg").read_bytes()
    assert image.data == stored and image.mime == "image/jpeg"  # the bytes as stored
    elephant = next(s for s in samples if s.id == "100/paper")
    assert elephant.target == {"published": "b", "lmms_eval": "a", "corrected": "a"}
    assert elephant.metadata["pair"] == 50 and elephant.metadata["item"] == "100"
    assert bench.dataset()["layout"] == "MMVP/MMVP" and bench.total() == 12 * 3  # rows read


def test_lmms_evals_parquet_copy_gives_the_same_samples_and_labels(tmp_path):
    path = write_parquet(tmp_path / "l" / "data" / "train-00000-of-00001.parquet",
                         [{"Index": i, "Question": q, "Options": o,
                           "Correct Answer": f"({truth(i, 'lmms-eval')})"}
                          for i, q, o, _ in ROWS], seed=0)
    assert path.is_file()
    lmms = {s.id: s for s in build({"data_dir": tmp_path / "l"}).samples()}
    mine = {s.id: s for s in build({"data_dir": official(tmp_path / "o")}).samples()}
    assert lmms.keys() == mine.keys()
    for key, sample in mine.items():
        assert isinstance(sample, Sample)
        assert lmms[key].target == sample.target, key
        assert lmms[key].messages[0].parts[1] == sample.messages[0].parts[1]
    assert lmms["99/paper"].target == {"published": "a", "lmms_eval": "b", "corrected": "a"}


def scripted(wrong: set[int], images: dict[str, int]):
    """A model that sees the image (known by its bytes' hash) and answers every prompt in
    its own format: right, except on the questions in `wrong`, against the published
    labels."""
    def answer(prompt: Prompt) -> str:
        index = images[hashlib.sha256(prompt.last_image() or b"").hexdigest()]
        letter = truth(index)
        if index in wrong:
            letter = "b" if letter == "a" else "a"
        if "Answer with the option's letter" in prompt.text:
            return letter.upper()
        if "Please select the correct answer" in prompt.text:
            return f"The answer is {letter.upper()}."
        return f"({letter})"
    return answer


def args(server, data: Path, out: Path, *extra: str) -> list:
    return ["mmvp", "--backend", "openai", "--base-url", server.base_url + "/v1", "--model",
            "m", "--data-dir", data, "--out", out, "--no-progress", "--backoff-base", "0.01",
            "--backoff-cap", "0.05", *extra]


def test_every_protocol_and_label_set_against_the_loopback_server(serve, tmp_path):
    data = official(tmp_path / "d")
    images = {hashlib.sha256((data / "MMVP Images" / f"{i}.jpg").read_bytes()).hexdigest(): i
              for i, *_ in ROWS}
    server = serve(answer=scripted({64}, images))
    out = tmp_path / "run"
    result = invoke(*args(server, data, out))
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 8 * 3  # one request per question and prompt
    metrics = load(out)
    protocols = metrics["protocols"]
    # Published labels: 7 of 8 right, pairs 2, 3, 4 right of 4 (pair 32 lost 64).
    for protocol in ("paper", "vlmevalkit"):
        own = protocols[protocol]["original"]
        assert (own["accuracy"], own["pair_accuracy"]) == (7 / 8, 3 / 4), protocol
        assert own["accuracy_ci95_clusters"] == "pair"
    # lmms-eval's labels: the four relabelled answers are now wrong, pairs 50 and 140 lost.
    lmms = protocols["lmms-eval"]["original"]
    assert (lmms["accuracy"], lmms["pair_accuracy"]) == (3 / 8, 1 / 4)
    # Corrected: 100, 279, 280 move; pair 50 (both now (a)) and 140 lost.
    corrected = protocols["paper"]["corrected"]
    assert (corrected["accuracy"], corrected["pair_accuracy"]) == (4 / 8, 1 / 4)
    assert metrics["corrections"]["effect"]["paper"]["changed"] == 3
    assert protocols["paper"]["unparsed"] == {} and protocols["lmms-eval"]["unparsed"] == {}
    diff = {p["protocol"]: p for p in metrics["differences"]["protocols"]}
    causes = {c["cause"]: c["lost"] for c in diff["lmms-eval"]["causes"]}
    assert causes == {"label set": 4}  # same verdicts otherwise: only its labels differ
    assert (out / "protocols.csv").read_text().count("label set") == 4
    rows = list(csv.DictReader((out / "results.csv").read_text().splitlines()))
    assert [(r["protocol"], r["labels"]) for r in rows][:2] == [("paper", "original"),
                                                                ("paper", "corrected")]
    assert rows[0]["pair_accuracy_pct"] == "75.0"
    printed = flat(result.output)
    assert "MMVP: m, accuracy (percent)" in printed
    assert "Why the protocols differ" in printed and "label set" in printed
    assert "this run: temperature 0.0, at most 1024 tokens" in printed
    record = next(r for r in journal(out) if r["id"] == "63/paper")
    assert record["metadata"]["pattern"] == "Positional and Relational Context"
    page = (out / "report.html").read_text()
    for title in ("Why the protocols differ", "What the label corrections change",
                  "Per visual pattern", "Generation"):
        assert title in page, title
    shown = invoke("show", out)
    assert shown.exit_code == 0 and "Corrected labels" in flat(shown.output)


def test_random_baseline_offline_reads_every_prompt(tmp_path):
    write_synthetic(tmp_path / "d", 12)
    out = tmp_path / "run"
    result = invoke("mmvp", "--backend", "builtin", "--model", "random", "--data-dir",
                    tmp_path / "d", "--out", out, "--no-progress", "--pairs", "4")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    for protocol, blocks in metrics["protocols"].items():
        assert blocks["original"]["n"] == 8 and blocks["original"]["n_pairs"] == 4, protocol
    # random answers "(a)" or "(b)" to the paper's inline options: every answer read.
    assert metrics["protocols"]["paper"]["unparsed"] == {}
    assert load(out, "run.json")["options"]["pairs"] == 4


@pytest.mark.slow
def test_blind_control_against_chance(serve, tmp_path):
    data = official(tmp_path / "d")
    server = serve(answer=lambda prompt: "(a)" if "(a)" in prompt.text else "A")
    out = tmp_path / "run"
    result = invoke(*args(server, data, out, "--protocol", "paper", "--variant", "blind"))
    assert result.exit_code == 0, result.output
    shown = flat(invoke("show", out).output)
    # Always (a): half the questions, no pair; chance is 50% and 25%.
    assert "Without the image, against chance" in shown
    assert "blind paper 0.0 [0.0, 0.0] below 50.0 [50.0, 50.0] within 4" in shown
    variants = json.loads((out / "variants.json").read_text())
    metric = variants["variants"][0]["metrics"][0]
    assert metric["chance"]["value"] == 0.5 and metric["variant"]["value"] == 0.5


def test_dry_run_prices_the_published_set_offline_and_reference_lists_the_paper():
    result = invoke("mmvp", "--dry-run", "--backend", "openai", "--model", "gpt-4o")
    assert result.exit_code == 0, result.output
    printed = flat(result.output)
    assert "requests 900" in printed and "MMVP 300: published counts" in printed
    shown = flat(invoke("reference", "mmvp").output)
    assert "GPT-4V paper 38.7" in shown and "Random Guess paper 25.0" in shown
    assert "lmms_eval/tasks/mmvp/utils.py lines 32-67" in shown


@pytest.mark.parametrize("option, value", [("--pairs", "0"), ("--labels", "fixed")])
def test_bad_options_are_one_line(option, value, tmp_path):
    result = invoke("mmvp", "--backend", "builtin", "--model", "random", option, value,
                    "--data-dir", tmp_path)
    assert result.exit_code == 2
    assert option in flat(result.output + result.stderr)


def grader(prompt: Prompt) -> str:
    """A scripted judge: the paper's grader question answered by comparing the answer's
    letter with the correct one (Index 63's grading answered "Yes." on purpose: neither yes
    nor no for the paper's regular expression); VLMEvalKit's matching question answered
    with the letter of the answer's option."""
    text = prompt.text
    if "Does the following answer correctly answers the question" in text:
        correct = text.split("the correct answer is ", 1)[1][:3]
        answer = text.rsplit("answer:", 1)[1]
        if "taller daisy" in text:
            return "Yes."
        return "yes" if answer.startswith(correct) else "no"
    if "match an answer with several options" in text:
        # the options as build_option_str writes them (vlmeval/smp/vlm.py lines 174-179)
        assert "\nOptions: There are several options: \nA. " in text, text[-300:]
        answer = text.rsplit("Answer: ", 1)[1]
        return "B" if "(b)" in answer else "A"
    raise AssertionError(f"not a judge's question: {text[:80]}")


def test_the_judges_grade_the_papers_answers_and_read_what_vlmevalkits_rules_leave(
        serve, tmp_path):
    data = official(tmp_path / "d")
    images = {hashlib.sha256((data / "MMVP Images" / f"{i}.jpg").read_bytes()).hexdigest(): i
              for i, *_ in ROWS}
    model = scripted(set(), images)

    def answer(prompt: Prompt) -> str:
        found = model(prompt)  # right everywhere; VLMEvalKit's prompt answered "(a)"/"(b)",
        return f"({found[-2].lower()})" if found.startswith("The answer") else found

    server, judge = serve(answer=answer), serve(answer=grader)
    out = tmp_path / "run"
    result = invoke(*args(server, data, out, "--judge-backend", "openai", "--judge-model",
                          "m", "--judge-base-url", judge.base_url + "/v1"))
    assert result.exit_code == 0, result.output
    # The grader is asked once per distinct label the run needs (published, lmms-eval's,
    # corrected: two for 99, 100, 279 and 280, one for the others), VLMEvalKit's matching
    # prompt once for each of its answers, "(a)" or "(b)", that its rules cannot read.
    assert judge.stats.requests == 12 + 8
    metrics = load(out)
    paper = metrics["protocols"]["paper"]
    assert paper["original"]["accuracy"] == 6 / 8  # the daisy pair's "Yes." is not "yes"
    assert paper["unparsed"] == {"the grader's reply was neither yes nor no (not correct, as "
                                 "the paper counts it)": 2}
    assert paper["corrected"]["accuracy"] == 3 / 8  # the grader told 100, 279, 280's new label
    diff = {p["protocol"]: p for p in metrics["differences"]["protocols"]}
    assert {c["cause"]: c["lost"] for c in diff["lmms-eval"]["causes"]}["label set"] == 4
    vlmevalkit = metrics["protocols"]["vlmevalkit"]
    assert vlmevalkit["original"]["accuracy"] == 1.0 and vlmevalkit["unparsed"] == {}
    assert metrics["readings"]["paper"] == "the paper's grader prompt, asked of m"
    records = {r["id"]: r for r in journal(out)}
    assert records["100/paper"]["parsed"]["paper_grader"] == {"(a)": "no", "(b)": "yes"}
    assert records["100/paper"]["parsed"]["paper_rule"] == "(b)"
    assert records["63/vlmevalkit"]["parsed"]["vlmevalkit_judge"] == \
        {"replies": ["A"], "how": "judge"}


def test_a_failed_judge_request_is_an_error_never_a_verdict(serve, tmp_path):
    data = official(tmp_path / "d", rows=ROWS[:2])
    server, judge = serve(answer=lambda p: "(a)"), serve(answer=grader, fail_first=100)
    out = tmp_path / "run"
    result = invoke(*args(server, data, out, "--protocol", "paper", "--max-attempts", "1",
                          "--judge-backend", "openai", "--judge-model", "m",
                          "--judge-base-url", judge.base_url + "/v1"))
    assert result.exit_code == 1, result.output  # failed samples: retry them with --resume
    block = load(out)["protocols"]["paper"]["original"]
    assert (block["n"], block["n_errors"]) == (0, 2) and "accuracy" not in block
    assert all(r["response"]["error"].startswith("judge: ") for r in journal(out))


def test_an_unreadable_judge_reply_is_asked_again_then_vlmevalkits_random_pick(
        serve, tmp_path):
    data = official(tmp_path / "d")
    images = {hashlib.sha256((data / "MMVP Images" / f"{i}.jpg").read_bytes()).hexdigest(): i
              for i, *_ in ROWS}
    model = scripted(set(), images)

    def answer(prompt: Prompt) -> str:
        found = model(prompt)
        return f"({found[-2].lower()})" if found.startswith("The answer") else found

    def unsure(prompt: Prompt) -> str:
        return "I cannot tell." if "match an answer" in prompt.text else grader(prompt)

    server, judge = serve(answer=answer), serve(answer=unsure)
    out = tmp_path / "run"
    result = invoke(*args(server, data, out, "--protocol", "vlmevalkit", "--judge-backend",
                          "openai", "--judge-model", "m", "--judge-base-url",
                          judge.base_url + "/v1"))
    assert result.exit_code == 0, result.output
    # three tries per unread answer, each sent (an unreadable reply is not cached) ...
    assert judge.stats.requests == 8 * 3
    records = {r["id"]: r for r in journal(out)}
    said = records["63/vlmevalkit"]["parsed"]["vlmevalkit_judge"]
    # ... then VLMEvalKit's random pick among A, B and Z (multiple_choice.py lines 403-405)
    assert said == {"replies": ["I cannot tell."] * 3,
                    "how": "random after three unreadable judge replies"}
    assert records["63/vlmevalkit"]["parsed"]["vlmevalkit"] in ("A", "B", "Z")
