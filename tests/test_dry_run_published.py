"""A dry run never needs the images: without --data-dir, SalBench and IllusionBench count
what a run would send from the published row counts shipped with them (their rows.json),
download nothing (HF_HUB_OFFLINE=1 would refuse it) and say what is estimated; with a local
copy they count its rows as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import invoke

from visioneval.benchmarks.illusionbench.definition import DEFINITION as ILLUSIONBENCH
from visioneval.benchmarks.salbench.definition import DEFINITION as SALBENCH

BENCHMARKS = Path(__file__).parents[1] / "src" / "visioneval" / "benchmarks"
PAPER = Path(__file__).parents[1] / "examples" / "suites" / "paper.toml"


def _hub_cache() -> list[str]:
    """Whatever the Hugging Face cache holds (the session's own home)."""
    root = Path(os.environ["HF_HOME"])
    return sorted(str(p) for p in root.rglob("*")) if root.exists() else []


def _rows(benchmark: str) -> dict:
    return json.loads((BENCHMARKS / benchmark / "rows.json").read_text())["rows"]


@pytest.mark.slow
def test_salbench_counts_the_published_rows_and_downloads_nothing(tmp_path):
    before = _hub_cache()
    result = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--splits",
                    "synthetic", "--batch", "--dry-run", "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    p3 = _rows("salbench")["P3"]
    out = result.stdout
    assert f"requests        {3 * p3:,}" in out
    assert f"rows            P3 {p3:,}, P3_box {p3:,}, P3_box_img {p3:,}: published counts, " \
        "nothing downloaded" in out
    assert "source          salbench-vlm/salbench, revision" in out
    assert "estimate        input tokens from a typical prompt's text, not the images'" in out
    assert f"{3 * p3:,} images not counted" in out and "batch cost" in out
    assert _hub_cache() == before and not (tmp_path / "run").exists()
    # A config whose count is not published is said, and --num-samples bounds it.
    natural = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--configs",
                     "P3,O3", "--dry-run")
    assert natural.exit_code == 0 and "not counted     O3: no published row count" \
        in natural.stdout
    bounded = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--configs",
                     "P3,O3", "--num-samples", "40", "--prompt", "both", "--dry-run")
    assert "requests        160" in bounded.stdout  # 2 configs x 40 rows x 2 prompts
    assert "rows unknown    O3: counted as --num-samples 40 each (at most)" in bounded.stdout


def test_illusionbench_counts_its_32505_images_with_its_own_prompts():
    rows = _rows("illusionbench")
    assert sum(rows.values()) == 32_505
    result = invoke("illusionbench", "--backend", "openai", "--model", "gpt-4o", "--dry-run")
    assert result.exit_code == 0, result.output
    options = ILLUSIONBENCH.validate_options({})
    per_row = len(options.tasks) * len(options.families)
    assert f"requests        {32_505 * per_row:,}" in result.stdout
    assert "input tokens from the prompts' text" in result.stdout
    # The text is the benchmark's own prompts, counted exactly from its rows' counts.
    published = ILLUSIONBENCH.build({}).published_rows()
    assert published is not None and published.requests() == 32_505 * per_row
    assert SALBENCH.build({"configs": ["P3"]}).published_rows().chars_source


def test_a_local_copy_is_counted_as_it_is(synth_data):
    result = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--data-dir",
                    synth_data, "--configs", "P3", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "requests        8" in result.stdout and "published counts" not in result.stdout


def test_the_paper_suite_is_planned_offline(tmp_path):
    before = _hub_cache()
    result = invoke("suite", PAPER, "--dry-run", "--out", tmp_path / "suite")
    assert result.exit_code == 0, result.output
    p3 = _rows("salbench")["P3"]
    assert "salbench shots=0" in result.stdout and f"{3 * p3:,}" in result.stdout
    assert "rows of salbench-vlm/salbench: its published counts" in result.stdout
    assert "rows of arshiahemmat/IllusionBench: its published counts" in result.stdout
    assert "O3, O3_box, O3_box_img: not counted in 6 runs" in result.stdout
    assert _hub_cache() == before and not (tmp_path / "suite").exists()
