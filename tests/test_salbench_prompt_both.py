"""`--prompt both`: lmms-eval's prompt as a second SalBench request family on the same rows,
its metrics beside the headline's, and the paired test of prompt against prompt, through
real loopback runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import invoke, journal, load, salbench_args
from helpers import png_bytes

from visioneval.benchmarks.salbench.metrics import paired_values, prompt_effect
from visioneval.benchmarks.salbench.spec import LMMS_EVAL_SUFFIX, O3_CLASSES
from visioneval.fmt import interval
from visioneval.io.parquet import write_hf_parquet
from visioneval.stats.paired import PairedCollector

O3_QUESTION = ("Context: Given this list of low level visual features defined according to "
               "feature integration theory: Orientation, Color, Focus, Shape, Size, Location, "
               "Pattern. Task: Examine the provided image and identify the feature(s) in which "
               "one object notably differs from the others. Write out all applicable features "
               "separated by comma.")
# The model answers "Color, Shape" to the paper's prompt and "Color" to lmms-eval's: the
# paper prompt gets row 0 right, lmms-eval's gets rows 2 and 4 right.
ANSWERS = ["Color, Shape", "Orientation", "Color", "Size, Pattern", "Color"]


def _answer(prompt) -> str:
    return "Color" if prompt.text.endswith(LMMS_EVAL_SUFFIX) else "Color, Shape"


def _o3(root: Path) -> Path:
    rows = [{"image": {"bytes": png_bytes((10 * i, 20, 30)), "path": f"o3-{i}.png"},
             "question": O3_QUESTION, "answer": answer, "image_id": f"o3img{i}"}
            for i, answer in enumerate(ANSWERS)]
    write_hf_parquet(root / "O3" / "shard_00000.parquet", rows, ["image"])
    return root


def _run(server, data: Path, out: Path, prompt: str, *extra: str):
    result = invoke(*salbench_args(server, data, out, "--configs", "O3", "--prompt", prompt,
                                   *extra))
    assert result.exit_code == 0, result.output
    return result


def test_both_prompts_equal_two_single_prompt_runs_and_are_paired(serve, tmp_path):
    server = serve(answer=_answer)
    data = _o3(tmp_path / "data")
    both = _run(server, data, tmp_path / "both", "both")
    assert server.stats.answered == 2 * len(ANSWERS)
    _run(server, data, tmp_path / "paper", "paper", "--no-report")
    _run(server, data, tmp_path / "lmms", "lmms-eval", "--no-report")

    records = journal(tmp_path / "both")
    ids = sorted(r["id"] for r in records)
    assert ids == sorted([f"O3/o3img{i}" for i in range(5)]
                         + [f"O3/o3img{i}@lmms-eval" for i in range(5)])
    groups = {r["id"]: r["group"] for r in records}
    assert groups["O3/o3img0"] == "O3" and groups["O3/o3img0@lmms-eval"] == "O3 lmms-eval prompt"

    block, paper, lmms = (load(tmp_path / d)["O3"] for d in ("both", "paper", "lmms"))
    # The headline is the paper prompt's, exactly as a paper-only run's; the second family's
    # metrics equal an lmms-eval-only run's.
    assert block["strict"] == paper["strict"] and block["lenient"] == paper["lenient"]
    assert block["by_prompt"]["lmms-eval"]["strict"] == lmms["strict"]
    view = block["protocols"]
    assert view["lmms_eval_prompt_macro_f1"] == lmms["strict"]["macro_f1"]
    assert view["lmms_eval_prompt_lmms_eval_o3_3class_f1"] == \
        lmms["protocols"]["lmms_eval_o3_3class_f1"]
    assert paper["strict"]["exact_match"] == pytest.approx(1 / 5)
    assert lmms["strict"]["exact_match"] == pytest.approx(2 / 5)

    effect = block["prompt_effect"]["lmms-eval"]
    assert effect["first"] == "paper" and effect["second"] == "lmms-eval"
    assert effect["n_pairs"] == 5 and "n_unpaired" not in effect
    em = effect["exact_match"]
    assert em["test"] == "McNemar exact"
    assert em["detail"] == ("right only with the paper prompt 1, only with the lmms-eval "
                            "prompt 2")
    assert em["p"] == pytest.approx(1.0)  # 1 vs 2 discordant: binomial two-sided p = 1
    assert em["difference"] == pytest.approx(1 / 5) and em["significant"] is False
    f1 = effect["macro_f1"]
    assert f1["first"] == pytest.approx(paper["strict"]["macro_f1"])
    assert f1["second"] == pytest.approx(lmms["strict"]["macro_f1"])
    low, high = f1["difference_ci95"]
    assert low <= f1["difference"] <= high

    # The main table the run ends with: each family's EM and F1 beside its 95% interval,
    # the lmms-eval prompt's row indented under the config's.
    lines = both.stdout.splitlines()
    for prompt, parsers in (("paper", block), ("lmms-eval", block["by_prompt"]["lmms-eval"])):
        strict = parsers["strict"]
        start = ["O3", "Detection"] if prompt == "paper" else ["lmms-eval"]
        line = next(x for x in lines if x.split()[:len(start)] == start)
        assert interval(strict["exact_match_ci95"], joiner=", ") in line
        assert interval(strict["macro_f1_ci95"], joiner=", ") in line
    out = invoke("show", tmp_path / "both").stdout  # every table
    assert "Prompt effect" in out and "McNemar" in out and "lmms-eval prompt" in out
    page = (tmp_path / "both" / "report.html").read_text()
    assert "lmms-eval prompt, O3 3-class F1" in page and "McNemar p" in page
    # The headline chart: EM and macro F1 under each prompt, each bar with its interval.
    assert "EM and macro F1 per config" in page and page.count('class="whisker"') == 4
    assert "macro F1 (lmms-eval prompt)" in page
    info = json.loads((tmp_path / "both" / "run.json").read_text())
    assert info["options"]["prompt"] == "both"


def test_compare_pairs_a_both_run_with_a_paper_run_on_the_headline(serve, tmp_path):
    server = serve(answer=_answer)
    data = _o3(tmp_path / "data")
    _run(server, data, tmp_path / "both", "both", "--no-report")
    _run(server, data, tmp_path / "paper", "paper", "--no-report")
    result = invoke("compare", tmp_path / "paper", tmp_path / "both", "--out",
                    tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    import csv

    with (tmp_path / "cmp" / "paired.csv").open() as handle:
        rows = {r["metric"]: r for r in csv.DictReader(handle)}
    # The headline family pairs with the paper run sample by sample: the same answers.
    assert float(rows["O3 exact match"]["difference"]) == 0.0
    assert rows["O3 exact match"]["significant at 5%"] == "False"


def test_prompt_effect_leaves_out_rows_scored_under_one_prompt():
    first, second = PairedCollector(), PairedCollector()
    gold = {"color"}
    for row in range(7):
        first.add(f"O3/{row}", paired_values({"color"}, gold, O3_CLASSES))
        if row != 6:  # row 6 failed under the second prompt
            second.add(f"O3/{row}", paired_values({"shape"}, gold, O3_CLASSES))
    effect = prompt_effect(first, second, "paper", "lmms-eval")
    assert effect["n_pairs"] == 6 and effect["n_unpaired"] == 1
    assert effect["exact_match"]["detail"].endswith("paper prompt 6, only with the lmms-eval "
                                                    "prompt 0")
    assert effect["exact_match"]["p"] == pytest.approx(2 * 0.5 ** 6)  # 0.031: significant
    assert effect["exact_match"]["significant"] is True
    assert effect["macro_f1"]["difference"] < 0 and effect["macro_f1"]["significant"] is True
    lone = PairedCollector()
    lone.add("O3/0", paired_values({"color"}, gold, O3_CLASSES))
    assert "a paired test needs two" in prompt_effect(lone, lone, "paper", "x")["unavailable"]
    assert "no row" in prompt_effect(None, second, "paper", "x")["unavailable"]


def test_a_both_run_in_shards_merges_to_the_whole_runs_metrics(serve, synth_data, tmp_path):
    """The prompt-effect test and the second family's intervals are order-free: shards of a
    `--prompt both` run merge to the whole run's metrics.json, byte for byte."""
    server = serve()

    def make(out: Path) -> list:
        return salbench_args(server, synth_data, out, "--configs", "P3,P3_box", "--prompt",
                             "both", "--no-report")

    whole = tmp_path / "whole"
    assert invoke(*make(whole)).exit_code == 0
    parts = []
    for k in (1, 2):
        part = tmp_path / f"part{k}"
        assert invoke(*make(part), "--shard", f"{k}/2").exit_code == 0
        parts.append(part)
    merged = tmp_path / "merged"
    result = invoke("merge", *parts, "--out", merged, "--no-report")
    assert result.exit_code == 0, result.output
    assert (merged / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()
    effect = load(whole)["P3"]["prompt_effect"]["lmms-eval"]
    assert effect["n_pairs"] == 8  # the 8 synthetic rows, each under both prompts
