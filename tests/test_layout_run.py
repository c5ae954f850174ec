"""A layout run is a run of the engine like any other: a run directory that resumes, a
report drawn by `visioneval report` from the definition's sections, shards whose pictures
the merged run links to, a captioner that follows the judge's key rules, and metric work
that runs beside the event loop."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal
from layout_fixtures import by_id, load, run_dir, write_fixture

from visioneval.benchmarks.layout.pool import MetricPool
from visioneval.canvas.synth import write_random


@pytest.fixture(scope="module")
def canvas(tmp_path_factory) -> Path:
    base = write_fixture(tmp_path_factory.mktemp("canvas"))
    write_random(base, 6, boxes=6, seed=3)
    return base


def _layout(canvas: Path, out: Path, *extra: object):
    return invoke("layout", "--base-dir", canvas, "--out", out, "--workers", "1",
                  "--no-progress", *extra)


@pytest.mark.slow
def test_a_cut_run_resumes_to_the_run_done_whole(canvas, tmp_path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert _layout(canvas, whole, "--no-report").exit_code == 0
    assert _layout(canvas, cut, "--no-report").exit_code == 0
    lines = (cut / "samples.jsonl").read_text().splitlines(keepends=True)
    (cut / "samples.jsonl").write_text("".join(lines[:3]))  # as if killed after 3 samples
    refused = invoke("layout", "--resume", cut, "--variant", "text_level_1")
    assert refused.exit_code == 2 and "--variant: is recorded in" in refused.stderr
    result = invoke("layout", "--resume", cut, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert len(journal(cut)) == len(lines) == 8
    assert "3 done before" in result.stdout
    assert (cut / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()

    def results(run: Path) -> dict:
        document = json.loads((run / "results.json").read_text())
        document.pop("seconds")
        return document

    assert results(cut) == results(whole)


@pytest.mark.slow
def test_visioneval_report_draws_the_layout_sections(canvas, tmp_path):
    out = tmp_path / "run"
    assert _layout(canvas, out, "--no-report").exit_code == 0
    assert not (out / "report.html").exists()
    result = invoke("report", out)
    assert result.exit_code == 0, result.output
    page = (out / "report.html").read_text()
    mean = load(out)["summary"]["image_only"]["iou50_f1"]["mean"]
    for heading in ("<h2>Summary</h2>", "<h2>Distributions</h2>",
                    "<h2>Skipped, errors and absent values</h2>"):
        assert heading in page
    assert f"{mean:.4f}" in page and "No pictures: run" in page
    # No model was asked: the run card says so instead of listing generation settings.
    assert "no model asked · gpt-4o" in page and "generation {" not in page
    # The sample browser: one row per pair, the generated render as its thumbnail.
    assert page.count('"t":"image_only/') == 8 and '"thumbs":{"i0":"data:image/webp' in page


def test_out_as_a_results_file_names_the_run_folder(canvas, tmp_path):
    out = tmp_path / "eval.json"
    result = _layout(canvas, out, "--ids", "ex1", "--no-report")
    assert result.exit_code == 0, result.output
    assert run_dir(out) == tmp_path / "eval" and (tmp_path / "eval" / "run.json").is_file()
    assert "names a results file" in flat(result.stderr) and not out.exists()
    again = _layout(canvas, out, "--ids", "ex1", "--no-report")
    assert again.exit_code == 2 and "already holds a run" in again.stderr


@pytest.mark.slow
def test_merged_shards_link_the_pictures_each_shard_drew(canvas, tmp_path):
    parts = []
    for k in (1, 2):
        part = tmp_path / f"part{k}"
        result = _layout(canvas, part, "--viz", "--shard", f"{k}/2", "--no-report")
        assert result.exit_code == 0, result.output
        parts.append(part)
    merged = tmp_path / "merged"
    assert invoke("merge", *parts, "--out", merged).exit_code == 0
    samples = load(merged)["samples"]
    assert len(samples) == 8
    for sample in samples:  # each picture folder, relative to the merged run's viz/
        assert sample["viz"].startswith("../../part")
        assert (merged / "viz" / sample["viz"] / "boxes.png").is_file()
    index = (merged / "viz" / "index.html").read_text()
    assert index.count("data:image/jpeg;base64,") == 8
    assert 'href="../../part1/viz/image_only/' in index or \
        'href="../../part2/viz/image_only/' in index
    assert "viz/index.html" in (merged / "report.html").read_text()


def _caption(prompt) -> str:
    return "A login screen with a button."


def test_the_captioner_is_the_runs_judge_cached_and_named_again_on_resume(canvas, tmp_path,
                                                                          serve):
    server = serve(answer=_caption)
    url = server.base_url + "/v1"
    served = ["--caption-backend", "openai", "--caption-model", "m", "--embedder", "bow"]
    out = tmp_path / "run"
    result = _layout(canvas, out, *served, "--caption-base-url", url, "--ids", "ex1,ex2",
                     "--no-report")
    assert result.exit_code == 0, result.output
    assert server.stats.answered == 4  # each distinct image once
    samples = by_id(load(out))
    assert samples["ex1"]["semantic_match"] == 1.0
    info = json.loads((out / "run.json").read_text())
    assert info["sessions"][-1]["judge_requests"] == 4
    assert info["backend"]["kind"] == "none" and info["backend"]["model"] == "gpt-4o"

    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text(lines[0])
    refused = invoke("layout", "--resume", out, "--no-progress")
    assert refused.exit_code == 2 and "--caption-base-url" in refused.stderr
    resumed = invoke("layout", "--resume", out, "--caption-base-url", url, "--no-progress",
                     "--no-report")
    assert resumed.exit_code == 0, resumed.output
    assert server.stats.answered == 4  # the second sample's captions came from the cache
    assert by_id(load(out)) == samples


def _child_pid() -> int:
    return os.getpid()


def test_the_metric_pool_runs_beside_the_loop_and_ends_with_it():
    pool = MetricPool(2)

    async def main() -> int:
        return await pool.run(_child_pid)

    pid = asyncio.run(main())
    assert pid != os.getpid()
    assert pool._executor is None  # shut down when asyncio.run ended
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
