"""A builtin baseline runs only on the benchmarks it was made for."""

from __future__ import annotations

import pytest
from cli_helpers import invoke


@pytest.mark.parametrize("model", ["popout", "majority"])
def test_illusionbench_refuses_salbench_baselines(illusion_data, tmp_path, model):
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "builtin", "--model", model, "--data-dir",
                    illusion_data, "--no-progress", "--no-cache", "--out", out)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: builtin model '{model}' does not fit illusionbench; its builtin models: "
        "random"]
    assert not out.exists()  # refused before anything was created


def test_salbench_lists_its_baselines_for_an_unknown_one(synth_data, tmp_path):
    result = invoke("salbench", "--backend", "builtin", "--model", "oracle", "--data-dir",
                    synth_data, "--configs", "P3", "--no-progress", "--out", tmp_path / "r")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: unknown builtin model 'oracle'; salbench's builtin models: popout, random, "
        "majority"]
