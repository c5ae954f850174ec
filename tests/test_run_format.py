"""run.json names its format: a new run writes `run_format`; a run from before the field
(format 1) still resumes and reports; a run from a newer visioneval is refused in one line."""

from __future__ import annotations

import json

from cli_helpers import invoke, load

from visioneval.core.store import RUN_FORMAT, RunStore, run_format


def _run(illusion_data, out, *extra):
    return invoke("illusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
                  illusion_data, "--subsets", "ICON", "--num-samples", "3", "--out", out,
                  "--no-progress", "--no-report", *extra)


def test_a_new_run_writes_its_format_and_an_old_run_without_one_still_resumes(
        illusion_data, tmp_path):
    out = tmp_path / "run"
    assert _run(illusion_data, out).exit_code == 0
    info = load(out, "run.json")
    assert info["run_format"] == RUN_FORMAT == run_format(info)
    metrics = load(out)

    del info["run_format"]  # as a run written before the field existed
    (out / "run.json").write_text(json.dumps(info))
    assert RunStore.open(out).written_format == 1
    (out / "metrics.json").unlink()
    result = invoke("illusionbench", "--resume", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert load(out) == metrics


def test_a_run_from_a_newer_visioneval_is_refused_in_one_line(illusion_data, tmp_path):
    out = tmp_path / "run"
    assert _run(illusion_data, out).exit_code == 0
    info = load(out, "run.json")
    (out / "run.json").write_text(json.dumps(info | {"run_format": RUN_FORMAT + 1}))
    result = invoke("illusionbench", "--resume", out, "--no-progress", "--no-report")
    assert result.exit_code != 0
    assert f"run_format {RUN_FORMAT + 1}" in result.output
    assert "Traceback" not in result.output
