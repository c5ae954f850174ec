"""HallusionBench end to end: the real command against the loopback server over real HTTP
(one request per question shared by the three protocols, the questions without a figure
sent without an image and asked for the paper alone), the offline random baseline, bad rows,
a Hub-shaped folder, the dry run, and the metrics checked against the paper's definitions
worked out here on the synthetic data."""

from __future__ import annotations

import csv
import os
import re
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_helpers import flat, invoke, journal, load
from helpers import png_bytes

from visioneval.benchmarks.hallusionbench.synth import write_synthetic
from visioneval.io.parquet import write_hf_parquet

UNSURE = "I cannot know that without the chart."


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hallusion")
    write_synthetic(root, 48, seed=2)
    return root


def rows(root: Path) -> list[dict]:
    out = []
    for split in ("image", "non_image"):
        for path in sorted(root.rglob(f"{split}-*.parquet")):
            out += pq.read_table(path, columns=["category", "subcategory", "visual_input",
                                                "set_id", "figure_id", "question_id",
                                                "gt_answer", "question"]).to_pylist()
    return out


def scripted(prompt) -> str:
    """Yes to the even questions on a figure, No to the odd ones; without a figure, not
    sure (the paper's grader would call it unclear)."""
    if not prompt.images:
        return UNSURE
    found = re.search(r"mark (\d+)", prompt.text)
    return "Yes, it is." if found is None or int(found[1]) % 2 == 0 else "No."


def expected(questions: list[dict], image_only: bool) -> dict[str, float]:
    """The paper's five numbers (tianyi-lab/HallusionBench utils.py: get_eval_all :165,
    get_eval_fig :130, get_eval_pair_all :205, get_eval_pair_easy :340, get_eval_pair_hard
    :372, with assign_correctness :404) for the scripted answers."""
    figures, groups, easy, hard = (defaultdict(list) for _ in range(4))
    right = []
    for r in questions:
        if image_only and r["visual_input"] == "0":
            continue
        if r["visual_input"] == "0":
            ok = r["category"] == "VS" and r["figure_id"] == "0"  # unclear counts right
        else:
            said = "1" if int(r["question_id"]) % 2 == 0 else "0"
            ok = said == r["gt_answer"]
        right.append(ok)
        base = (r["category"], r["subcategory"], r["set_id"])
        if not (r["category"] == "VS" and r["figure_id"] == "0"):
            figures[(*base, r["figure_id"])].append(ok)
        groups[(*base, r["question_id"])].append(ok)
        (hard if r["visual_input"] == "2" else easy)[(*base, r["question_id"])].append(ok)

    def share(found):
        return sum(all(v) for v in found.values()) / len(found)

    return {"aAcc": sum(right) / len(right), "fAcc": share(figures), "qAcc": share(groups),
            "easy": share(easy), "hard": share(hard)}


def args(server, data: Path, out: Path, *extra) -> list:
    return ["hallusionbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
            "--model", "m", "--data-dir", data, "--out", out, "--no-progress",
            "--backoff-base", "0.01", "--backoff-cap", "0.05", *extra]


def test_one_request_per_question_three_protocols_side_by_side(serve, data, tmp_path):
    server = serve(answer=scripted)
    out = tmp_path / "run"
    result = invoke(*args(server, data, out))
    assert result.exit_code == 0, result.output
    questions = rows(data)
    no_figure = sum(r["visual_input"] == "0" for r in questions)
    assert no_figure and server.stats.requests == len(questions) == 48
    metrics = load(out)
    blocks = metrics["protocols"]
    assert list(blocks) == ["paper", "lmms-eval", "vlmevalkit"]
    assert blocks["paper"]["n"] == 48 and blocks["paper"]["excluded"] == 0
    for protocol in ("lmms-eval", "vlmevalkit"):
        assert blocks[protocol]["n"] == 48 - no_figure
        assert blocks[protocol]["excluded"] == no_figure
    for protocol, image_only in (("paper", False), ("lmms-eval", True), ("vlmevalkit", True)):
        want = expected(questions, image_only)
        got = blocks[protocol]["overall"]
        for name, value in want.items():
            assert got[name] == pytest.approx(value), (protocol, name)
        assert got["aAcc_ci95_clusters"] == "set"
    assert blocks["paper"]["unclear"] == no_figure  # the no-figure answers: unclear, right
    vlm = blocks["vlmevalkit"]["mean_of_three"]["value"]
    overall = blocks["vlmevalkit"]["overall"]
    assert vlm == pytest.approx((overall["aAcc"] + overall["fAcc"] + overall["qAcc"]) / 3)
    # Why they differ: the same answers, so only the item set (and the aggregation notes).
    found = {p["protocol"]: p for p in metrics["differences"]["protocols"]}
    assert found["lmms-eval"]["excluded"] == no_figure and found["lmms-eval"]["differ"] == 0
    assert metrics["labels"]["sets"] == ["original", "corrected"]
    assert metrics["corrected"] is None and metrics["labels"]["items_corrected"] == 0
    records = journal(out)
    text_only = [r for r in records if r["metadata"]["visual_input"] == "0"]
    assert text_only and all(set(r["scores"]) == {"paper"} for r in text_only)
    assert all(not any(p.get("image") for p in r["prompt"]) for r in text_only)
    assert all(r["metadata"]["item"] == r["id"] for r in records)
    info = load(out, "run.json")
    assert info["generation"]["max_tokens"] == 128 and info["dataset"]["rows"] == {
        "image": 48 - no_figure, "non_image": no_figure}
    printed = flat(result.stdout)
    assert "qAcc [95%]" in printed and "Why the protocols differ" in printed
    assert "VLMEvalKit's one number" in printed
    with (out / "results.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert {r["protocol"] for r in table} == {"paper", "lmms-eval", "vlmevalkit"}
    assert (out / "protocols.csv").is_file()
    shown = invoke("show", out)
    assert shown.exit_code == 0
    for text in ("By subcategory", "Yes/no bias", "the paper's FP Ratio", "all right"):
        assert text in flat(shown.stdout)
    assert all(len(line) <= 100 for line in shown.stdout.splitlines())


def test_a_harness_alone_asks_only_the_questions_with_a_figure(serve, data, tmp_path):
    server = serve(answer=scripted)
    result = invoke(*args(server, data, tmp_path / "v", "--protocol", "vlmevalkit"))
    assert result.exit_code == 0, result.output
    questions = rows(data)
    assert server.stats.requests == sum(r["visual_input"] != "0" for r in questions)
    metrics = load(tmp_path / "v")
    assert list(metrics["protocols"]) == ["vlmevalkit"] and metrics["differences"] is None


def test_the_random_baseline_answers_yes_or_no(data, tmp_path):
    out = tmp_path / "random"
    result = invoke("hallusionbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", data, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    records = journal(out)
    assert {r["response"]["text"] for r in records} == {"Yes", "No"}
    paper = load(out)["protocols"]["paper"]
    assert paper["unclear"] == 0 and 0 < paper["overall"]["aAcc"] < 1


def _row(**values) -> dict:
    base = {"category": "VD", "subcategory": "math", "visual_input": "1", "set_id": "0",
            "figure_id": "0", "sample_note": "n", "question_id": "0",
            "question": "Is it?", "gt_answer_details": "Yes, it is.", "gt_answer": "1",
            "filename": "./VD/math/0_0.png", "image": {"bytes": png_bytes(), "path": "a.png"}}
    return base | values


def test_bad_rows_are_named_skipped_and_counted(serve, tmp_path):
    data = tmp_path / "repo"
    write_hf_parquet(data / "data" / "image-00000-of-00001.parquet", [
        _row(),
        _row(question_id="1", category="VX"),
        _row(question_id="2", gt_answer="yes"),
        _row(question_id="3", image=None),
        _row(question_id="4", image={"bytes": b"not an image", "path": "b.png"}),
        _row(question_id="5", question=""),
    ], ["image"])
    write_hf_parquet(data / "data" / "non_image-00000-of-00001.parquet",
                     [_row(category="VS", subcategory="chart", visual_input="0", image=None,
                           filename=None)], ["image"])
    server = serve(answer=scripted)
    out = tmp_path / "run"
    result = invoke(*args(server, data, out))
    assert result.exit_code == 0, result.output
    said = flat(result.stderr)
    assert "image row VX_math_0_0_1 (#1): column 'category' is 'VX'" in said
    assert "image row VD_math_0_0_2 (#2): column 'gt_answer' is 'yes'" in said
    assert "image row VD_math_0_0_3 (#3): column 'image' is empty" in said
    assert "image row VD_math_0_0_4 (#4): undecodable image" in said
    assert "image row VD_math_0_0_5 (#5): column 'question' is empty or not text" in said
    info = load(out, "run.json")
    assert info["counts"]["skipped_rows"] == 5 and server.stats.requests == 2
    assert load(out)["protocols"]["paper"]["n"] == 2


def test_a_folder_without_the_text_only_split_says_what_to_do(tmp_path):
    data = tmp_path / "repo"
    write_hf_parquet(data / "data" / "image-00000-of-00001.parquet", [_row()], ["image"])
    result = invoke("hallusionbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", data, "--out", tmp_path / "x", "--no-progress")
    assert result.exit_code == 2
    said = flat(result.stderr)
    assert "no non_image-*.parquet file" in said and "--protocol lmms-eval" in said
    ok = invoke("hallusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
                data, "--protocol", "lmms-eval", "--out", tmp_path / "y", "--no-progress")
    assert ok.exit_code == 0, ok.output


@pytest.mark.slow
def test_the_dry_run_counts_the_published_questions_and_downloads_nothing(tmp_path):
    hub = Path(os.environ["HF_HOME"])
    before = sorted(hub.rglob("*")) if hub.exists() else []
    result = invoke("hallusionbench", "--backend", "openai", "--model", "gpt-4o",
                    "--dry-run", "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "requests        1,129" in out
    assert "rows            image 951, non_image 178: published counts" in out
    assert "951 images not counted" in out
    assert "lmms-lab/HallusionBench, revision ea5fd49f1b711d12cc8b0ec75be0c0593e17befe" in out
    lone = invoke("hallusionbench", "--backend", "openai", "--model", "gpt-4o", "--protocol",
                  "lmms-eval", "--dry-run")
    assert lone.exit_code == 0 and "requests        951" in lone.stdout
    assert (sorted(hub.rglob("*")) if hub.exists() else []) == before
