"""The run report and the comparison: content, self-containment, flags; and the demo's report
in a real headless Chromium (console errors fail the test; a screenshot is kept)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import invoke, load, salbench_args, spawn

from visioneval.loopback.server import answer_popout

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).parent.parent / "test-artifacts"


def _mixed_answers(prompt):
    """Right on Detection and Visual Referring (popout), often wrong on Referring."""
    answer = answer_popout(prompt)
    return "Size." if "bounding box" in prompt.text and answer != "size" else answer


def _run(serve, synth_data, out, *extra, **script):
    server = serve(answer=_mixed_answers, **script)
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic", *extra))
    assert result.exit_code in (0, 1), result.output
    return result


def _embedded_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page,
                      re.DOTALL)
    return json.loads(match.group(1).replace("<\\/", "</"))


def test_every_run_writes_a_self_contained_report(serve, synth_data, tmp_path):
    out = tmp_path / "run"
    result = _run(serve, synth_data, out, "--max-attempts", "1", fail_rate=0.15, seed=3)
    assert f"report: {out / 'report.html'}" in result.stdout
    page = (out / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:|url\(\s*["']?https?:|<link""",
                         page)  # nothing to fetch
    metrics = load(out)
    for config in ("P3", "P3_box", "P3_box_img"):
        assert f"{100 * metrics[config]['strict']['macro_f1']:.1f}" in page
    data = _embedded_data(page)
    assert data["views"] == ["strict", "lenient"]
    assert len(data["rows"]) == 24 and data["groups"] == ["P3", "P3_box", "P3_box_img"]
    errors = [r for r in data["rows"] if r["e"]]
    assert errors and all(r["v"] == {} for r in errors)
    # Each of the 8 scenes appears in P3 and P3_box (same image) and P3_box_img (boxed):
    # 16 distinct images, stored once each.
    assert len(data["thumbs"]) == 16
    assert all(url.startswith("data:image/webp;base64,") for url in data["thumbs"].values())
    assert page.count("<svg") >= 6  # per-class bars and a confusion matrix per config


@pytest.mark.slow
def test_report_command_and_compare_flags(serve, synth_data, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _run(serve, synth_data, a)
    _run(serve, synth_data, b, "--prompt", "lmms-eval", "--num-samples", "4")
    (a / "report.html").unlink()
    result = invoke("report", a)
    assert result.exit_code == 0 and (a / "report.html").exists()
    result = invoke("compare", a, b, "--out", tmp_path / "cmp")
    assert result.exit_code == 0
    assert "prompt differs" in result.stderr and "num_samples differs" in result.stderr
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    f1 = f"{100 * load(a)['P3']['strict']['macro_f1']:.1f}"
    assert "| m (a) | 0 | - | - | " in md and f1 in md  # one model: rows name their run
    assert "**" in md  # best per column marked
    csv_head = (tmp_path / "cmp" / "comparison.csv").read_text().splitlines()[0]
    assert csv_head.startswith("Model,Shot,Detection_NAT F1,Detection_NAT EM")
    mixed = invoke("compare", a, tmp_path / "missing")
    assert mixed.exit_code == 2


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_demo_report_in_headless_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    proc = spawn("demo", "--n", "12", "--no-progress", cwd=tmp_path,
                 env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    report = Path(re.search(r"report: (\S+report\.html)", stdout).group(1))
    report = report if report.is_absolute() else tmp_path / report
    metrics = load(report.parent)
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("request", lambda r: problems.append(f"fetched {r.url}")
                if not r.url.startswith(("file:", "data:")) else None)
        page.goto(report.as_uri())
        table = page.inner_text("section:has(h2:text('Results (percent)')) table")
        for config in ("P3", "P3_box", "P3_box_img"):
            assert f"{100 * metrics[config]['strict']['exact_match']:.1f}" in table
        assert page.inner_text("#count") == "36 of 36 samples"
        assert page.locator(".sample").count() == 36
        page.select_option("#f-group", "P3_box")
        assert page.inner_text("#count") == "12 of 36 samples"
        wrong = sum(1 for r in (report.parent / "samples.jsonl").read_text().splitlines()
                    if json.loads(r)["group"] == "P3_box"
                    and json.loads(r)["scores"]["strict"]["exact_match"] < 1)
        page.select_option("#f-outcome", "wrong")
        assert page.inner_text("#count") == f"{wrong} of 36 samples"
        page.select_option("#f-outcome", "")
        page.select_option("#f-group", "")
        page.fill("#f-text", "P3_box_img/")
        assert page.inner_text("#count") == "12 of 36 samples"
        assert page.locator(".sample img").count() == 12  # thumbnails shown
        ARTIFACTS.mkdir(exist_ok=True)
        page.fill("#f-text", "")
        page.screenshot(path=str(ARTIFACTS / "demo-report.png"), full_page=True)
        browser.close()
    assert problems == []
    assert (ARTIFACTS / "demo-report.png").stat().st_size > 10_000
    assert os.path.getsize(report) < 1_000_000


def test_layout_results_get_a_report_with_distributions(tmp_path):
    assert invoke("data", "synth-layout", "--out", tmp_path / "canvas", "--n", "3",
                  "--boxes", "12").exit_code == 0
    out = tmp_path / "eval.json"
    result = invoke("layout", "--base-dir", tmp_path / "canvas", "--out", out, "--workers", "1",
                    "--no-progress")
    assert result.exit_code == 0, result.output
    page_path = tmp_path / "eval-report.html"
    assert f"report: {page_path}" in result.stdout
    page = page_path.read_text()
    document = json.loads(out.read_text())
    mean = document["summary"]["image_only"]["iou50_f1"]["mean"]
    assert f"{mean:.4f}" in page and page.count("<svg") == 1
    assert "semantic_match: " in page  # absent, with its reason
    page_path.unlink()
    assert invoke("report", out).exit_code == 0 and page_path.exists()


def test_capped_thumbnails_show_the_failures_first(serve, synth_data, tmp_path):
    from visioneval.report.page import write_report

    out = tmp_path / "run"
    _run(serve, synth_data, out, "--no-report")
    assert not (out / "report.html").exists()
    page = write_report(out, thumb_limit=3).read_text()
    data = _embedded_data(page)
    assert len(data["thumbs"]) == 3
    # Each thumbnail kept is the image of a wrong answer (rows sharing the image show it too).
    for key in data["thumbs"]:
        assert any(r["img"] == key and r["v"]["strict"]["ok"] is False for r in data["rows"])
    assert "Thumbnails for 3 of the 16 images of the embedded samples" in page
