"""The run report and the comparison: content, self-containment, flags; and the demo's report
in a real headless Chromium (console errors fail the test; a screenshot is kept)."""

from __future__ import annotations

import colorsys
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_helpers import invoke, load, salbench_args, spawn

from visioneval.loopback.server import answer_popout

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).parent.parent / "test-artifacts"
EXAMPLES = Path(__file__).parent.parent / "examples"


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
    # Eight samples a config against four: every interval is wide, no run is ahead beyond
    # its interval, so nothing is bold and the note says why.
    assert "**" not in md and "no run is ahead beyond its interval" in md
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


@pytest.mark.slow
def test_layout_results_get_a_report_with_distributions(tmp_path):
    assert invoke("data", "synth-layout", "--out", tmp_path / "canvas", "--n", "3",
                  "--boxes", "12").exit_code == 0
    out = tmp_path / "eval"
    result = invoke("layout", "--base-dir", tmp_path / "canvas", "--out", out, "--workers", "1",
                    "--no-progress")
    assert result.exit_code == 0, result.output
    page_path = out / "report.html"
    assert f"report: {page_path}" in result.stdout
    page = page_path.read_text()
    document = json.loads((out / "results.json").read_text())
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


class _Outline(HTMLParser):
    """A page's top-level sections in DOM order: class, id, title (h2), the table heads and
    how many tables and charts (svg) each holds."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict] = []
        self._depth = 0
        self._grab: str | None = None

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "section":
            self._depth += 1
            if self._depth == 1:
                self.sections.append({"class": found.get("class") or "", "id": found.get("id"),
                                      "title": "", "heads": [], "tables": 0, "svgs": 0})
        elif self.sections and self._depth:
            now = self.sections[-1]
            if tag in ("h2", "th"):
                self._grab = tag
                if tag == "th":
                    now["heads"].append("")
            now["tables"] += tag == "table"
            now["svgs"] += tag == "svg"

    def handle_endtag(self, tag):
        if tag == "section":
            self._depth -= 1
        if tag == self._grab:
            self._grab = None

    def handle_data(self, data):
        if self._grab == "h2":
            self.sections[-1]["title"] += data
        elif self._grab == "th":
            self.sections[-1]["heads"][-1] += data


def _outline(page: str) -> list[dict]:
    parser = _Outline()
    parser.feed(page)
    return parser.sections


def _four_benchmark_runs(synth_data, illusion_data, tmp_path) -> dict[str, Path]:
    """A real run of each benchmark with a report (builtin baselines; evaluate with
    validators only, no judge)."""
    runs = {name: tmp_path / name for name in ("salbench", "illusionbench", "vqa", "evaluate")}
    commands = {
        "salbench": ["salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                     synth_data, "--splits", "synthetic"],
        "illusionbench": ["illusionbench", "--backend", "builtin", "--model", "random",
                          "--data-dir", illusion_data, "--num-samples", "6"],
        "vqa": ["vqa", "--data", EXAMPLES / "vqa" / "questions.jsonl", "--scorer", "choice",
                "--group-col", "category", "--backend", "builtin", "--model", "random"],
    }
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps({
        "id": f"c{i}", "output": f"{i} bottles, Q{i}: ${i}.5M",
        "expected_output": f"{2 + i % 2} bottles, ${i}.5M",
        "evaluators": [{"validator": "count"}, {"validator": "chart"}]}) for i in range(4)))
    commands["evaluate"] = ["evaluate", cases]
    for name, command in commands.items():
        result = invoke(*command, "--out", runs[name], "--no-progress")
        assert result.exit_code == 0, (name, result.output)
    return runs


@pytest.mark.slow
def test_every_benchmark_page_leads_with_its_headline_table_and_chart(synth_data, illusion_data,
                                                                       tmp_path):
    """The headline table (with its 95% intervals) and chart come first in the page's DOM
    order; the run card (cards, backend line, cost, endpoints, configuration) after them."""
    for name, run in _four_benchmark_runs(synth_data, illusion_data, tmp_path).items():
        sections = _outline((run / "report.html").read_text())
        lead, card = sections[0], next(i for i, s in enumerate(sections) if s["id"] == "run")
        assert lead["class"] == "lead" and card == 1, (name, sections)
        assert lead["tables"] == 1 and lead["svgs"] >= 1, (name, lead)
        assert any("95% interval" in head for head in lead["heads"]), (name, lead["heads"])
        assert sections[card]["title"] == "Run" and "configuration" not in lead["title"]
        assert sections[-1]["id"] == "browser"  # the samples stay last


def _greenish(colour: str) -> bool:
    """A colour a reader takes for "right": a saturated hue between yellow-green and teal."""
    if colour.startswith("#"):
        rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    else:
        rgb = [int(v) / 255 for v in re.findall(r"\d+", colour)[:3]]
    hue, saturation, value = colorsys.rgb_to_hsv(*rgb)
    return 75 <= hue * 360 <= 165 and saturation > 0.25 and value > 0.2


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_outcome_colours_carry_their_meaning(serve, illusion_data, tmp_path):
    """Right is green; a wrong answer, a failed request, an unscored row and IllusionBench's
    "named neither" never are (in the sample browser's badges and in every chart)."""
    from playwright.sync_api import sync_playwright

    from visioneval.loopback.server import answer_hash

    server = serve(answer=answer_hash, fail_rate=0.3, seed=4)
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--num-samples", "6", "--max-attempts", "1", "--out", out, "--no-progress")
    assert result.exit_code == 1, result.output  # some requests failed
    page_text = (out / "report.html").read_text()
    fills = re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"[^>]*>\s*<title>([^<]*)</title>',
                       page_text)
    neither = [fill for fill, tip in fills if "named neither" in tip]
    assert neither and not any(_greenish(f) for f in neither)
    # Nothing an IllusionBench page charts is a verdict: no bar is green.
    assert fills and not any(_greenish(fill) for fill, _ in fills)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox",
                                                                    "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto((out / "report.html").as_uri())
        page.select_option("#f-view", "original")
        colours: dict[str, set[str]] = {}
        for outcome in ("correct", "wrong", "error", "unscored"):
            page.select_option("#f-outcome", outcome)
            tags = page.locator(".sample .tag")
            colours[outcome] = {tags.nth(i).evaluate("e => getComputedStyle(e).backgroundColor")
                                for i in range(min(tags.count(), 5))}
        browser.close()
    assert all(colours.values()), colours  # the run has every outcome
    assert all(_greenish(c) for c in colours["correct"])
    for outcome in ("wrong", "error", "unscored"):
        assert not any(_greenish(c) for c in colours[outcome]), (outcome, colours)
    assert colours["error"].isdisjoint(colours["wrong"])  # a failure is not a wrong answer
