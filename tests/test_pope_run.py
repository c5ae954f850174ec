"""POPE end to end: the newcomer's path (synth-pope, then the offline random baseline and the
loopback server over real HTTP) prints the paper's table first, then how the harnesses read
the same questions and why they differ, with intervals; a model that answers "yes" to
everything gets the numbers the paper's formulas give, and the blind control shows that it
answers so without the image; the `test` layout reads the same rows; bad rows are named."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from helpers import png_bytes

from visioneval.benchmarks.pope.synth import write_synthetic
from visioneval.io.parquet import iter_rows, write_hf_parquet
from visioneval.loopback.server import answer_fixed

IMAGES = 3  # per setting: 18 questions each, 54 in all


@pytest.fixture(scope="module")
def pope_data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pope") / "data"
    write_synthetic(out, IMAGES)
    return out


def labels(data: Path, setting: str) -> list[str]:
    files = sorted((data / "Full").glob(f"{setting}-*.parquet"))
    return [row.values["answer"] for row in iter_rows(files, ("answer",))]


def order_of(text: str, *parts: str) -> list[int]:
    found = [text.find(p) for p in parts]
    assert all(i >= 0 for i in found), (parts, text)
    return found


def test_newcomer_path_offline_prints_the_papers_table_then_the_differences(tmp_path):
    data = tmp_path / "data" / "pope"
    made = invoke("data", "synth-pope", "--out", data, "--n", str(IMAGES))
    assert made.exit_code == 0, made.output
    out = tmp_path / "run"
    result = invoke("pope", "--backend", "builtin", "--model", "random", "--data-dir", data,
                    "--protocol", "all", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    text = result.stdout
    first, harnesses, why, repope = order_of(
        text, "the paper's protocol (evaluate.py), each setting apart",
        "The same questions under each harness's prompt and rules",
        "Why the protocols differ", "RePOPE's corrected labels")
    assert first < harnesses < why < repope
    assert "[95%]: cluster bootstrap over images" in flat(text)
    assert "mean F1 of the three settings" in text and "pooled (pope)" in text
    assert all(len(line) <= 100 for line in text.splitlines())
    metrics = load(out)
    paper = metrics["paper"]["original"]
    assert [paper["settings"][s]["n"] for s in ("random", "popular", "adversarial")] == \
        [6 * IMAGES] * 3
    assert paper["settings"]["random"]["f1_ci95_clusters"] == "image"
    assert paper["settings"]["random"]["f1_ci95_n_clusters"] == IMAGES
    assert metrics["lmms-eval"]["original"]["pooled"]["n"] == 18 * IMAGES
    assert metrics["lmms-eval"]["original"]["pooled"]["lmms_yes_ratio"] == 0.5
    assert metrics["vlmevalkit"]["original"]["overall"]["n"] == 18 * IMAGES
    # The synthetic set carries RePOPE's corrections of its first images' questions.
    assert metrics["labels"]["relabelled"] + metrics["labels"]["left_out"] > 0
    assert metrics["labels"]["n_problems"] == 0
    records = journal(out)
    assert len(records) == 2 * 18 * IMAGES  # one request per prompt: paper's, lmms-eval's
    assert {r["metadata"]["family"] for r in records} == {"paper", "lmms-eval"}
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert {r["scope"] for r in rows} >= {"random", "pooled (pope)", "Overall",
                                          "mean F1 of the settings"}
    assert (out / "protocols.csv").exists()


def test_the_same_path_against_the_loopback_server(serve, pope_data, tmp_path):
    server = serve()  # answers yes or no to a yes/no question, by a checksum of the prompt
    out = tmp_path / "run"
    result = invoke("pope", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", pope_data, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    # A question asked in several settings (every "yes" question is in all three) is the
    # same request: the cache answers it once the first answer is in (one still in flight
    # is asked again).
    files = sorted((pope_data / "Full").glob("*.parquet"))
    distinct = {(r.values["image_source"], r.values["question"])
                for r in iter_rows(files, ("image_source", "question"))}
    assert 2 * len(distinct) <= server.stats.requests < 2 * 18 * IMAGES
    assert len(journal(out)) == 2 * 18 * IMAGES
    assert load(out, "run.json")["counts"]["cache_hits"] == \
        2 * 18 * IMAGES - server.stats.requests
    assert "each setting apart" in result.stdout and "Why the protocols differ" in \
        result.stdout
    readings = {r["parsed"].get("paper") for r in journal(out) if r["parsed"].get("paper")}
    assert readings == {"yes", "no"}


@pytest.mark.slow
def test_a_model_that_always_says_yes_and_the_blind_control(serve, pope_data, tmp_path):
    server = serve(answer=answer_fixed("Yes"))
    out = tmp_path / "run"
    result = invoke("pope", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", pope_data, "--out", out, "--no-progress",
                    "--protocol", "paper", "--labels", "original", "--variant", "blind")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    for setting in ("random", "popular", "adversarial"):
        truth = labels(pope_data, setting)
        share = truth.count("yes") / len(truth)
        block = metrics["paper"]["original"]["settings"][setting]
        assert block["yes_ratio"] == 1.0 and block["recall"] == 1.0
        assert block["precision"] == pytest.approx(share)
        assert block["f1"] == pytest.approx(2 * share / (share + 1))  # 2PR/(P+R), R = 1
        assert block["accuracy"] == pytest.approx(share)
    blind = load(out, "variants.json")["variants"][0]
    assert blind["name"] == "blind" and blind["removes_image"]
    found = {m["metric"]: m for m in blind["metrics"]}
    yes = found["random yes ratio (paper)"]
    assert yes["variant"]["value"] == 1.0 and yes["chance"]["value"] == 0.5
    assert yes["versus_chance"]["significant"]  # the prior it brings, without the image
    accuracy = found["random accuracy (paper)"]
    assert accuracy["variant"]["value"] == pytest.approx(0.5)
    assert not accuracy["versus_chance"]["significant"]
    assert blind["answered_without_image"]["count"] == 3 * 3 * IMAGES  # every "yes" question
    shown = invoke("show", out)
    assert shown.exit_code == 0, shown.output
    assert "blind: random yes ratio (paper) 100.0% [100.0, 100.0] without the image; chance " \
        "50.0%" in flat(shown.stdout)


def test_the_test_layout_reads_the_same_questions(serve, pope_data, tmp_path):
    only_test = tmp_path / "test-only"
    for path in (pope_data / "data").glob("test-*.parquet"):
        (only_test / "data").mkdir(parents=True, exist_ok=True)
        (only_test / "data" / path.name).write_bytes(path.read_bytes())
    server = serve()
    runs = {}
    for name, data in (("full", pope_data), ("test", only_test)):
        runs[name] = tmp_path / name
        result = invoke("pope", "--backend", "openai", "--base-url", server.base_url + "/v1",
                        "--model", "m", "--data-dir", data, "--out", runs[name],
                        "--no-progress", "--protocol", "paper", "--settings", "popular")
        assert result.exit_code == 0, result.output
    assert load(runs["test"], "run.json")["dataset"]["rows"] == {"popular": 6 * IMAGES}
    full, test = load(runs["full"]), load(runs["test"])
    assert full["paper"] == test["paper"]
    assert sorted(r["id"] for r in journal(runs["full"])) == \
        sorted(r["id"] for r in journal(runs["test"]))


def row(qid: str, answer: str = "yes", **more) -> dict:
    image = {"bytes": png_bytes(), "path": "x.png"}
    return {"id": qid, "question_id": qid, "question": "Is there a dog in the image?",
            "answer": answer, "image_source": "synthetic_000001", "category": "random",
            "image": image} | more


def test_bad_rows_are_named_skipped_and_counted(serve, tmp_path):
    data = tmp_path / "data"
    write_hf_parquet(data / "Full" / "random-00000-of-00001.parquet", [
        row("1"), row("2", "no"), row("3", "maybe"), row("4", category="popular"),
        row("5", image={"bytes": b"", "path": "a.png"}), row("6", question=""),
        row("", "no")], ["image"])
    server = serve()
    out = tmp_path / "run"
    result = invoke("pope", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", data, "--out", out, "--no-progress",
                    "--settings", "random")
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    expected = {"question_id 3": "column 'answer' is 'maybe', not yes or no",
                "question_id 4": "column 'category' is 'popular' in the random split",
                "question_id 5": "undecodable image: empty image bytes",
                "question_id 6": "column 'question' is empty or not text",
                "#6": "column 'question_id' is empty or not text"}
    for where, reason in expected.items():
        assert any(f"skipped random row {where}: " in ln and reason in ln for ln in lines), \
            (where, lines)
    assert load(out, "run.json")["counts"]["skipped_rows"] == len(expected)
    assert load(out)["paper"]["original"]["settings"]["random"]["n"] == 2


def test_a_folder_without_pope_files_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    result = invoke("pope", "--backend", "builtin", "--model", "random", "--data-dir",
                    tmp_path / "empty", "--out", tmp_path / "run", "--no-progress")
    assert result.exit_code == 2
    assert "has no random-*.parquet" in flat(result.stderr) and "Traceback" not in \
        result.output


def test_vlmevalkits_judge_reads_the_answers_its_rules_cannot(serve, pope_data, tmp_path):
    """The model says "Perhaps" (VLMEvalKit's rules: Unknown; the paper's: yes); the judge,
    given VLMEvalKit's matching prompt without the image, says No on its first try."""
    prompts = []

    def answer(prompt) -> str:
        if "match an answer with two options" in prompt.text:
            prompts.append(prompt)
            return "No"
        return "Perhaps"

    server = serve(answer=answer, models=("m", "j"))
    out = tmp_path / "run"
    result = invoke("pope", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", pope_data, "--out", out, "--no-progress",
                    "--settings", "random", "--labels", "original", "--judge-backend",
                    "openai", "--judge-model", "j", "--judge-base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    n = 6 * IMAGES
    assert len(prompts) == n and not prompts[0].images
    first = prompts[0].text
    assert first.endswith("in the image??\nAnswer: Perhaps\nYour output: ")
    metrics = load(out)
    vlm = metrics["vlmevalkit"]["original"]["settings"]["random"]
    assert vlm["unparsed"] == 0 and vlm["yes_ratio"] == 0.0  # every answer judged "No"
    paper = metrics["paper"]["original"]["settings"]["random"]
    assert paper["yes_ratio"] == 1.0  # the paper's rule reads "Perhaps" as yes
    notes = {n["cause"]: n["what"] for n in metrics["differences"]["notes"]}
    assert notes["judge"].startswith(f"the judge read {n} Unknown answers: 0 yes, {n} no")
    record = next(r for r in journal(out) if r["metadata"]["family"] == "paper")
    assert record["parsed"]["vlmevalkit_rule"] == "Unknown"
    assert record["parsed"]["vlmevalkit_judge"] == "No"
    refused = invoke("pope", "--backend", "builtin", "--model", "random", "--data-dir",
                     pope_data, "--protocol", "paper", "--judge-backend", "openai",
                     "--judge-model", "j", "--out", tmp_path / "refused")
    assert refused.exit_code == 2 and "give --protocol vlmevalkit or all" in \
        flat(refused.stderr)
