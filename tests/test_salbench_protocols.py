"""SalBench's protocol view (the same answers as the paper, leniently, as sample F1 and as
lmms-eval main's 3-class O3 mean) and results per difficulty, through a real loopback run."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import invoke, load, salbench_args
from helpers import png_bytes

from visioneval.io.parquet import write_hf_parquet

O3_QUESTION = ("Context: Given this list of low level visual features defined according to "
               "feature integration theory: Orientation, Color, Focus, Shape, Size, Location, "
               "Pattern. Task: Examine the provided image and identify the feature(s) in which "
               "one object notably differs from the others. Write out all applicable features "
               "separated by comma.")
ROWS = [  # (answer, difficulty); the model always answers "Color, Shape"
    ("Color, Shape", "easy"), ("Orientation", "hard"), ("Color", "hard"),
    ("Size, Pattern", "Easy")]


def _o3(root: Path, with_difficulty: bool) -> Path:
    rows = []
    for i, (answer, level) in enumerate(ROWS):
        row = {"image": {"bytes": png_bytes((10 * i, 20, 30)), "path": f"o3-{i}.png"},
               "question": O3_QUESTION, "answer": answer, "image_id": f"o3img{i}"}
        if with_difficulty:
            row["difficulty"] = level
        rows.append(row)
    write_hf_parquet(root / "O3" / "shard_00000.parquet", rows, ["image"])
    return root


def _f1(tp, fp, fn, eps=1e-8):
    p, r = tp / (tp + fp + eps), tp / (tp + fn + eps)
    return 2 * p * r / (p + r + eps)


def test_protocol_view_and_difficulty_from_the_same_answers(serve, tmp_path):
    server = serve(answer=lambda prompt: "Color, Shape")
    data = _o3(tmp_path / "data", with_difficulty=True)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, data, out, "--configs", "O3"))
    assert result.exit_code == 0, result.output
    block = load(out)["O3"]
    color, shape = _f1(2, 2, 0), _f1(1, 3, 0)
    zero = _f1(0, 0, 1)  # orientation, size, pattern: missed once each
    view = block["protocols"]
    assert view["headline_macro_f1"] == block["strict"]["macro_f1"]
    assert view["headline_macro_f1"] == pytest.approx((color + shape + 3 * zero) / 7)
    assert view["lenient_macro_f1"] == block["lenient"]["macro_f1"]
    assert view["sample_f1"] == block["strict"]["sample_f1"]
    assert view["lmms_eval_o3_3class_f1"] == pytest.approx((zero + color + zero) / 3)
    assert view["lmms_eval_o3_3class_f1"] != pytest.approx(view["headline_macro_f1"])
    levels = block["by_difficulty"]
    assert set(levels) == {"easy", "hard"}  # "Easy" and "easy" are one level
    assert levels["easy"]["n"] == 2 and levels["easy"]["exact_match"] == 0.5
    assert levels["hard"]["n"] == 2 and levels["hard"]["exact_match"] == 0.0
    shown = invoke("show", out).stdout  # the tables beside the main one
    assert "Why published numbers differ" in shown
    assert "lmms-eval O3" in shown and "3-class F1" in shown
    assert "by difficulty" in shown
    page = (out / "report.html").read_text()
    assert "Why published numbers differ" in page and "hard" in page


def test_without_a_difficulty_column_it_says_so(serve, tmp_path):
    server = serve(answer=lambda prompt: "Color")
    data = _o3(tmp_path / "data", with_difficulty=False)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, data, out, "--configs", "O3", "--no-report"))
    assert result.exit_code == 0, result.output
    block = load(out)["O3"]
    assert "by_difficulty" not in block
    assert "no difficulty column" in block["by_difficulty_unavailable"]
    assert "By difficulty: not available" in invoke("show", out).stdout


def test_p3_has_no_three_class_figure_and_a_failed_run_gives_reasons(serve, synth_data,
                                                                     tmp_path):
    server = serve(fail_rate=1.0, faults=("500",))
    out = tmp_path / "run"
    invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "--no-report",
                          "--max-attempts", "1"))
    view = load(out)["P3"]["protocols"]
    assert "lmms_eval_o3_3class_f1" not in view and "lmms_eval_o3_3class_f1_unavailable" \
        not in view
    assert "headline_macro_f1" not in view and "no scored samples" in \
        view["headline_macro_f1_unavailable"]
