"""`visioneval layout` as a user runs it, on CANVAS-shaped directories made by code."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from layout_fixtures import by_id, folder, invoke, load, run_dir, write_broken, write_fixture
from PIL import Image as PILImage


@pytest.fixture(scope="module")
def canvas_dir(tmp_path_factory):
    return write_fixture(tmp_path_factory.mktemp("canvas"))


@pytest.mark.slow
def test_worked_examples_end_to_end(canvas_dir, tmp_path):
    out = tmp_path / "res.json"
    result = invoke("--base-dir", canvas_dir, "--out", out, "--workers", 1, "--no-progress")
    assert result.exit_code == 0, result.stderr
    assert "semantic match left out" in result.stderr
    doc = load(out)
    samples = by_id(doc)
    assert [s["id"] for s in doc["samples"]] == ["ex1", "ex2"] and doc["skipped"] == []

    ex1 = samples["ex1"]  # quadrants swapped: no overlap, same count
    assert ex1["canvas_fill"] == 0.5  # C and D cover half of the frame
    assert (ex1["precision"], ex1["recall"], ex1["layout_overlap"]) == (1.0, 1.0, 1.0)
    assert ex1["mean_iou"] == 0.3333 and ex1["num_matched"] == 3
    assert (ex1["iou50_precision"], ex1["iou50_recall"], ex1["iou50_f1"]) == (0, 0, 0)
    assert ex1["block_match"] == 0.0
    assert "position_similarity" in ex1["absent"]
    # The frame joins the groups of its own edges, so every group box is the frame and
    # CANVAS's metric calls the swapped layout perfectly aligned (ties resolved in order).
    assert ex1["alignment_f1"] == 1.0 and ex1["num_gt_groups"] == 4
    assert ex1["struct_completeness"] == 1.0
    assert ex1["step_count"] == 7 and ex1["tool_call_count"] == 6
    assert ex1["tool_call_count_dedup"] == 3 and ex1["unique_tool_count"] == 2
    assert ex1["tool_efficiency"] == 0.0625 and ex1["tool_accuracy"] == 0.6667
    assert 0 < ex1["pixel_fidelity"] < 1 and ex1["psnr"] > 0
    assert "visual_completeness" in ex1["absent"]  # no semantic match without a captioner

    ex2 = samples["ex2"]  # overlapping squares on a full-size background
    assert ex2["canvas_fill"] == 0.4375
    assert (ex2["mean_iou"], ex2["precision"], ex2["recall"]) == (1.0, 0.5, 1.0)
    assert ex2["layout_overlap"] == 0.6667 and ex2["element_count_ratio"] == 1.0
    assert (ex2["iou50_precision"], ex2["iou50_recall"], ex2["iou50_f1"]) == (0.3333, 1.0,
                                                                               0.5)
    assert ex2["block_match"] == 0.2857  # .5 of 1.75
    assert ex2["position_similarity"] == 1.0 and ex2["color_similarity"] == 1.0
    assert "json-response" in ex2["absent"]["tool_efficiency"]
    assert ex2["absent"]["tool_accuracy"] == ex2["absent"]["tool_efficiency"]

    summary = doc["summary"]["image_only"]
    # mean_ci95: the mean's bootstrap interval, within the two samples' values
    assert summary["canvas_fill"] == {"mean": 0.4688, "median": 0.4688, "count": 2,
                                      "mean_ci95": [0.4375, 0.5]}
    assert summary["tool_efficiency"]["count"] == 1
    rows = list(csv.DictReader(io.StringIO((run_dir(out) / "results.csv").read_text())))
    assert [r["id"] for r in rows] == ["ex1", "ex2"] and rows[1]["canvas_fill"] == "0.4375"
    assert "tool_efficiency: no ex2" in rows[1]["absent"]


@pytest.mark.slow
def test_broken_inputs_give_named_errors_and_skipped_pairs(tmp_path):
    base = write_broken(write_fixture(tmp_path / "canvas"))
    out = tmp_path / "res.json"
    result = invoke("--base_dir", base, "--out", out, "--workers", 1, "--no-progress")
    assert result.exit_code == 1
    doc = load(out)
    samples = by_id(doc)
    skipped = {s["id"]: s["reason"] for s in doc["skipped"]}
    assert set(skipped) == {"no-gen-image", "no-gen-json"}
    assert re.search(r"missing .*no-gen-image-gpt-4o-image_only\.png", skipped["no-gen-image"])
    assert "-figma-hierarchy.json (or " in skipped["no-gen-json"]
    expected = {"bad-json": "not JSON", "no-coords": "has no 'x'",
                "zero-frame": "zero-size frame", "nan": "non-finite coordinate"}
    for gid, message in expected.items():
        s = samples[gid]
        for family in ("canvas_fill", "layout_iou", "alignment", "components"):
            assert message in s[f"{family}_error"] and f"{gid}-gpt-4o" in s[f"{family}_error"]
        assert "pixel_fidelity" in s and "tool_call_count" in s  # the rest still computed
    bad = samples["bad-image"]
    assert "bad-image-gpt-4o-image_only.png" in bad["pixel_fidelity_error"]
    assert "not an image" in bad["pixel_fidelity_error"]
    assert bad["mean_iou"] == 0.3333  # layout metrics unaffected
    assert samples["ex1"]["tool_efficiency"] == 0.0625
    assert "pixel_fidelity_error" in result.stderr or "error" in result.stderr


@pytest.mark.slow
def test_ids_select_and_errors(canvas_dir, tmp_path):
    out = tmp_path / "one.json"
    result = invoke("--base-dir", canvas_dir, "--ids", "ex2", "--out", out, "--no-progress")
    assert result.exit_code == 0 and [s["id"] for s in load(out)["samples"]] == ["ex2"]
    out = tmp_path / "two.json"  # a run directory holds one run
    result = invoke("--base-dir", canvas_dir, "--ids", "ex2,nope", "--out", out,
                    "--no-progress")
    assert result.exit_code == 0 and "--ids nope: no such sample" in result.stderr
    assert load(out)["missing_ids"] == ["nope"]
    result = invoke("--base-dir", canvas_dir, "--ids", "nope", "--out", out)
    assert result.exit_code == 2
    assert "no sample matches --ids nope (samples: ex1, ex2)" in result.stderr
    result = invoke("--base-dir", tmp_path / "absent", "--out", out)
    assert result.exit_code == 2 and "base directory not found" in result.stderr
    result = invoke("--base-dir", canvas_dir, "--model", "gpt-5", "--out", out)
    assert result.exit_code == 2 and "no results for model 'gpt-5'" in result.stderr
    assert "(models: gpt-4o)" in result.stderr
    result = invoke("--base-dir", canvas_dir, "--variant", "text_level_1", "--out", out)
    assert result.exit_code == 2 and "variants: image_only" in result.stderr


def _captioner(prompt):
    """A scripted VLM: the caption depends on the image (red top-right corner or not)."""
    image = PILImage.open(io.BytesIO(prompt.last_image())).convert("RGB")
    colour = "red" if image.getpixel((75, 25)) == (255, 0, 0) else "blue"
    assert "Describe this user-interface design" in prompt.text
    return f"A Login screen with a {colour} button."


@pytest.mark.slow
def test_semantic_match_with_a_served_captioner_and_reuse(canvas_dir, tmp_path, serve):
    server = serve(answer=_captioner)
    out = tmp_path / "sem.json"
    args = ["--base-dir", canvas_dir, "--out", out, "--workers", 1, "--no-progress",
            "--caption-backend", "openai", "--caption-base-url", server.base_url + "/v1",
            "--caption-model", "m"]
    result = invoke(*args, "--embedder", "bow")
    assert result.exit_code == 0, result.stderr
    samples = by_id(load(out))
    ex1, ex2 = samples["ex1"], samples["ex2"]
    # Bag of words: {a: 2, login, screen, with, blue|red, button}: 8 / (3 * 3).
    assert ex1["semantic_match"] == 0.8889
    assert ex1["gt_caption"] == "a login screen with a blue button."
    assert ex1["gen_caption"] == "a login screen with a red button."
    assert ex2["semantic_match"] == 1.0
    assert ex1["visual_completeness"] == round(
        (0.5 + ex1["pixel_fidelity"] + 0.8889) / 3, 4)
    assert server.stats.answered == 4  # each distinct image captioned once

    # --skip-semantic reuses the earlier values of that run (--semantic-from).
    reused = tmp_path / "reused"
    result = invoke("--base-dir", canvas_dir, "--out", reused, "--no-progress",
                    "--skip-semantic", "--semantic-from", run_dir(out))
    assert result.exit_code == 0 and server.stats.answered == 4
    again = by_id(load(reused))
    assert again["ex1"]["semantic_match"] == 0.8889
    assert again["ex1"]["gen_caption"] == ex1["gen_caption"]

    # MiniLM without the extra: absent with the reason, never 0.
    args[args.index(out)] = out = tmp_path / "minilm"
    result = invoke(*args)
    samples = by_id(load(out))
    assert result.exit_code == 0 and "semantic_match" not in samples["ex1"]
    reason = samples["ex1"]["absent"]["semantic_match"]
    assert "sentence-transformers" in reason or "all-MiniLM" in reason


@pytest.mark.slow
def test_skip_blip_alias_and_canvas_shaped_previous_results(canvas_dir, tmp_path):
    out = tmp_path / "old.json"
    out.write_text(json.dumps([{"id": "ex1", "semantic_match": 0.42, "gt_caption": "g",
                                "gen_caption": "h"}]))  # CANVAS's own output format
    result = invoke("--base_dir", canvas_dir, "--out", out, "--skip_blip", "--no-progress")
    assert result.exit_code == 0
    samples = by_id(load(out))
    assert samples["ex1"]["semantic_match"] == 0.42
    assert "no earlier value" in samples["ex2"]["absent"]["semantic_match"]


def test_unreachable_captioner_is_a_usage_error(canvas_dir, tmp_path):
    result = invoke("--base-dir", canvas_dir, "--out", tmp_path / "x.json", "--embedder",
                    "bow", "--caption-backend", "openai", "--caption-model", "m",
                    "--caption-base-url", "http://127.0.0.1:9/v1")
    assert result.exit_code == 2 and "error:" in result.stderr


@pytest.mark.slow
def test_workers_give_the_same_results_in_the_same_order(tmp_path):
    base = write_broken(write_fixture(tmp_path / "canvas"))
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert invoke("--base-dir", base, "--out", one, "--workers", 1, "--no-progress"
                  ).exit_code == 1
    assert invoke("--base-dir", base, "--out", two, "--workers", 2, "--no-progress"
                  ).exit_code == 1
    assert load(one)["samples"] == load(two)["samples"]


@pytest.mark.slow
def test_viz_pictures_and_a_self_contained_sortable_index(canvas_dir, tmp_path):
    out = tmp_path / "res.json"
    result = invoke("--base-dir", canvas_dir, "--out", out, "--viz", "--workers", 1,
                    "--no-progress")
    assert result.exit_code == 0, result.stderr
    viz = run_dir(out) / "viz"
    for gid in ("ex1", "ex2"):
        for name in ("boxes.png", "alignment.png", "thumb.jpg", "report.json"):
            assert (viz / "image_only" / gid / name).stat().st_size > 0
    with PILImage.open(viz / "image_only" / "ex1" / "boxes.png") as im:
        assert im.width > 600
    report = json.loads((viz / "image_only" / "ex1" / "report.json").read_text())
    assert sorted(p["iou"] for p in report["matched_pairs"]) == [0.0, 0.0, 1.0]
    assert by_id(load(out))["ex1"]["viz"] == "image_only/ex1"
    page = (viz / "index.html").read_text()
    assert page.startswith("<!doctype html>") and page.count("<tr>") == page.count("</tr>")
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", page)  # nothing remote
    assert page.count("data:image/jpeg;base64,") == 2 and "addEventListener('click'" in page
    assert "image_only/ex1/boxes.png" in page and 'data-v="0.4375"' in page


@pytest.mark.slow
def test_the_typer_module_imports_only_typer(tmp_path):
    import subprocess
    import sys

    code = ("import sys; import visioneval.cli; "
            "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'visioneval.canvas',"
            " 'scipy', 'matplotlib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    assert folder(tmp_path, "x").name == "x-gpt-4o-image_only"


@pytest.mark.slow
def test_several_variants_are_summarised_apart(tmp_path):
    from layout_fixtures import swapped

    from visioneval.canvas.synth import write_gen

    base = write_fixture(tmp_path / "canvas")
    write_gen(base, "ex1", swapped()[0], variant="text_level_1", calls=None)  # a perfect copy
    out = tmp_path / "res.json"
    result = invoke("--base-dir", base, "--variant", "image_only,text_level_1", "--out", out,
                    "--no-progress")
    assert result.exit_code == 0, result.stderr
    doc = load(out)
    assert [(s["variant"], s["id"]) for s in doc["samples"]] == [
        ("image_only", "ex1"), ("image_only", "ex2"), ("text_level_1", "ex1")]
    perfect = doc["samples"][2]
    assert (perfect["iou50_f1"], perfect["mean_iou"], perfect["pixel_fidelity"]) == (1, 1, 1)
    assert "identical" in perfect["absent"]["psnr"]
    assert doc["summary"]["text_level_1"]["iou50_f1"] == {"mean": 1.0, "median": 1.0,
                                                          "count": 1}
    assert doc["summary"]["image_only"]["iou50_f1"]["count"] == 2


def test_flags_for_a_model_under_test_are_refused_in_one_line(canvas_dir, tmp_path):
    """Layout asks no model: the shared flags that set one say so, naming the flag; the
    help says --variant is CANVAS's."""
    out = tmp_path / "run"
    for given in (["--temperature", "0.5"], ["--backend", "openai"], ["--dry-run"],
                  ["--target-ci", "5"], ["--probe-resolution"], ["--viz-dir", "pics"]):
        result = invoke("--base-dir", canvas_dir, "--out", out, *given)
        assert result.exit_code == 2, (given, result.output)
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith(f"error: {given[0]}: "), lines
    assert not out.exists()
    assert "layout asks no model" in invoke("--base-dir", canvas_dir, "--temperature", "0"
                                            ).stderr
    shown = " ".join(invoke("--help").stdout.split())
    assert "CANVAS's variant folder(s), comma-separated (not request variants: layout sends " \
        "no image to a model)" in shown and "--temperature" not in shown


@pytest.mark.slow
def test_the_closing_lines_name_the_directory_named_before_the_run(canvas_dir, tmp_path,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("--base-dir", canvas_dir, "--ids", "ex1", "--workers", 1, "--no-progress",
                    "--no-report")
    assert result.exit_code == 0, result.stderr
    (made,) = (tmp_path / "results").iterdir()
    assert made.name.startswith("layout-gpt-4o-")
    said = " ".join(result.stdout.split())
    where = f"results: results/{made.name}/results.json and results/{made.name}/results.csv"
    assert where in said
    resumed = invoke("--resume", f"results/{made.name}", "--no-progress", "--no-report")
    assert resumed.exit_code == 0 and where in " ".join(resumed.stdout.split())
