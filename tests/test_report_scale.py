"""Big runs: the page embeds a bounded set of samples (failures first) and stays fast; every
sample stays reachable through `visioneval view`, over real HTTP on 127.0.0.1; per-endpoint
stats in run.json show as a table. Synthetic runs are written with the real RunStore and
scored by the real benchmark (`report.synthrun`)."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import Viewing
from PIL import Image

from visioneval.core.runfiles import SessionInfo
from visioneval.core.store import RunStore
from visioneval.report.page import write_report
from visioneval.report.synthrun import write_run

CONFIGS = ["P3", "P3_box", "P3_box_img"]


def _synth_run(out: Path, data: Path, n: int) -> Path:
    return write_run(out, "salbench", {"configs": CONFIGS, "data_dir": str(data)}, n)


def _embedded_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page,
                      re.DOTALL)
    assert match is not None
    return json.loads(match.group(1).replace("<\\/", "</"))


def _journal(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_a_capped_page_keeps_every_failure_first(synth_data, tmp_path):
    run = _synth_run(tmp_path / "run", synth_data, 600)
    records = _journal(run)
    errors = {r["id"] for r in records if r["response"]["error"]}
    wrong = {r["id"] for r in records if not r["response"]["error"]
             and r["scores"]["strict"]["exact_match"] < 1}
    assert errors and len(errors) + len(wrong) > 100  # the cap below cuts into failures
    data = _embedded_data(write_report(run, thumb_limit=5, row_limit=100).read_text())
    ids = [row["id"] for row in data["rows"]]
    assert len(ids) == 100 and data["total"] == 600
    assert errors <= set(ids)  # every error first, then unparsed/wrong answers only
    assert set(ids) <= errors | wrong
    positions = [r["id"] for r in records]
    assert ids == sorted(ids, key=positions.index)  # shown in journal order
    page = (run / "report.html").read_text()
    assert "This page embeds 100 of the run&#39;s 600 samples" in page
    assert f"visioneval view {run}" in page
    assert len(data["thumbs"]) == 5


def test_per_endpoint_stats_show_in_the_run_section(synth_data, tmp_path):
    run = _synth_run(tmp_path / "run", synth_data, 30)
    store = RunStore.open(run)
    store.info.sessions = [SessionInfo.model_validate({"seconds": 1.0, "endpoints": {
        "http://127.0.0.1:9001/v1": {"requests": 20, "errors": 1, "latency_s_mean": 0.2041},
        "http://127.0.0.1:9002/v1": {"requests": 10, "errors": 0, "latency_s_mean": 0.5,
                                     "taken_out": 2},
        "http://127.0.0.1:9003/v1": {"requests": 3, "errors": 3, "latency_s_mean": None,
                                     "taken_out": 1}},
        "dispatch": {"concurrency_ceiling": 48, "concurrency_lowest": 12, "http_429": 7,
                     "rate_limit_wait_s": 2.25}})]
    store.save_info()
    page = write_report(run).read_text()
    table = re.search(r"<h2>Run</h2>.*?(<table.*?</table>)", page, re.DOTALL)
    assert table is not None
    cells = re.findall(r"<t[hd](?: [^>]*)?>(.*?)</t[hd]>", table.group(1))
    assert cells[:5] == ["endpoint", "requests", "errors", "mean latency (s)",
                         "times taken out"]
    assert cells[5:10] == ["http://127.0.0.1:9001/v1", "20", "1", "0.204", ""]
    assert cells[10:15] == ["http://127.0.0.1:9002/v1", "10", "0", "0.500", "2"]
    assert cells[15:20] == ["http://127.0.0.1:9003/v1", "3", "3", "-", "1"]
    assert "In flight at most 48 (lowest 12 after HTTP 429s, 7 of them); 2.2 s waited" in page


@pytest.mark.slow
def test_view_serves_every_sample_over_http(synth_data, tmp_path):
    run = _synth_run(tmp_path / "run", synth_data, 1500)
    records = _journal(run)
    viewing = Viewing(run)
    try:
        status, kind, body = viewing.get("")
        assert status == 200 and kind == "text/html"
        assert _embedded_data(body.decode())["server"] == "api/rows"
        seen = []
        for page in range(3):
            got = viewing.rows(page=page, size=500)
            assert got["total"] == 1500 and got["matched"] == 1500 and got["page"] == page
            seen += [row["id"] for row in got["rows"]]
        assert seen == [r["id"] for r in records]  # every sample, in journal order, once
        errors = [r["id"] for r in records if r["response"]["error"]]
        got = viewing.rows(outcome="error", view="strict", size=500)
        assert [row["id"] for row in got["rows"]] == errors
        assert all(row["e"].startswith("HTTP 500") for row in got["rows"])
        wrong = [r["id"] for r in records if r["group"] == "P3_box" and
                 not r["response"]["error"] and r["scores"]["strict"]["exact_match"] < 1]
        got = viewing.rows(group="P3_box", outcome="wrong", view="strict", size=500)
        assert got["matched"] == len(wrong) and [r["id"] for r in got["rows"]] == wrong
        needle = records[700]["id"].lower()
        got = viewing.rows(q=needle)
        assert got["matched"] >= 1 and records[700]["id"] in [r["id"] for r in got["rows"]]
        assert viewing.rows(q="cannot tell from this")["matched"] == sum(
            1 for r in records if (r["response"]["text"] or "").startswith("I cannot tell"))
        assert viewing.rows(page=99)["page"] == 29  # past the end: the last page
        row = viewing.rows(page=5)["rows"][0]
        status, kind, body = viewing.get(viewing.rows(page=5)["thumbs"][row["img"]])
        assert status == 200 and kind == "image/webp"
        with Image.open(io.BytesIO(body)) as im:
            assert max(im.size) <= 96
        assert viewing.get("thumb/" + "0" * 64)[0] == 404
        assert viewing.get("api/record/P3/no-such-sample")[0] == 404
        status, _, body = viewing.get(f"api/record/{records[3]['id']}")
        assert status == 200 and json.loads(body) == records[3]
    finally:
        code, _ = viewing.stop()
    assert code == 0


CHROMIUM = __import__("shutil").which("chromium") or __import__("shutil").which(
    "chromium-browser")


def _maxrss_report(run: Path) -> tuple[float, int]:
    """Seconds and peak RSS (KB) of writing the report in a fresh process. The peak is the
    process's own VmHWM: `ru_maxrss` would carry the parent's peak across exec."""
    script = ("import re, sys, time; from pathlib import Path; "
              "from visioneval.report.page import write_report; t = time.perf_counter(); "
              "write_report(Path(sys.argv[1])); status = Path('/proc/self/status').read_text();"
              "print(time.perf_counter() - t, re.search(r'VmHWM:\\s+(\\d+)', status)[1])")
    out = subprocess.run([sys.executable, "-c", script, str(run)], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_a_big_run_report_and_view_in_headless_chromium(synth_data, tmp_path):
    from playwright.sync_api import sync_playwright

    n = 60_000
    run = _synth_run(tmp_path / "run", synth_data, n)
    seconds, rss_kb = _maxrss_report(run)
    assert seconds < 60 and rss_kb < 500_000  # generous: ~5 s and ~200 MB here
    report = run / "report.html"
    assert report.stat().st_size < 6_000_000
    errors = json.loads((run / "run.json").read_text())["counts"]["errors"]
    viewing = Viewing(run)
    problems: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
                    if r.status >= 400 else None)
            started = time.perf_counter()
            page.goto(report.as_uri())
            page.wait_for_selector(".sample")
            opened = time.perf_counter() - started
            assert page.inner_text("#count") == f"3000 of 3000 samples embedded (the run " \
                                                f"has {n})"
            assert page.locator(".sample").count() == 50
            started = time.perf_counter()
            page.select_option("#f-outcome", "error")
            assert page.inner_text("#count").startswith(f"{errors} of 3000")  # all errors
            page.select_option("#f-group", "P3_box")
            page.fill("#f-text", "#7")
            filtered = time.perf_counter() - started
            assert opened < 10 and filtered < 10  # generous: well under 2 s here
            assert "visioneval view" in page.inner_text("#browser .note")
            page.goto(viewing.url)
            page.wait_for_function(
                "document.getElementById('count').textContent.includes('of')")
            assert page.inner_text("#count") == f"{n} of {n} samples"
            page.select_option("#f-outcome", "error")
            page.wait_for_function(
                f"document.getElementById('count').textContent === '{errors} of {n} samples'")
            page.wait_for_function("[...document.querySelectorAll('.sample img')].length > 0 "
                                   "&& [...document.querySelectorAll('.sample img')]"
                                   ".every((i) => i.complete && i.naturalWidth > 0)",
                                   timeout=60_000)
            browser.close()
    finally:
        assert viewing.stop()[0] == 0
    assert problems == []
