"""A selection with no rows says so in one line (exit 2) before anything is sent; a run that
recorded nothing still gets a report that says so, and `visioneval report` works on it."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from cli_helpers import invoke, load

from visioneval.io.parquet import write_hf_parquet

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
QUESTION = "Context: Orientation, Color, Size. Task: which feature differs?"


def empty_parquet(path, columns):
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([pa.field(c, IMAGE if c == "image" else pa.string()) for c in columns])
    pq.write_table(schema.empty_table(), path)


def test_salbench_with_no_rows_is_one_line(serve, tmp_path):
    data = tmp_path / "data"
    empty_parquet(data / "P3" / "test-00000.parquet", ["image", "question", "answer", "image_id"])
    server = serve()
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", data, "--configs", "P3", "--num-samples", "5",
                    "--out", out, "--no-progress")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: nothing to evaluate: salbench P3 has 0 rows in {data.resolve()}"]
    assert server.stats.requests == 0 and not out.exists()


def test_illusionbench_with_no_rows_is_one_line(tmp_path):
    data = tmp_path / "data"
    empty_parquet(data / "Illusion_ICON-00000-of-00001.parquet", ["image_name", "image"])
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    data, "--subsets", "ICON", "--tasks", "shape", "--out", tmp_path / "run",
                    "--no-progress")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: nothing to evaluate: illusionbench ICON has 0 rows in {data.resolve()}"]


def test_illusionbench_run_with_every_row_skipped_still_reports(tmp_path):
    data = tmp_path / "data"
    write_hf_parquet(data / "Illusion_ICON-00000-of-00001.parquet",
                     [{"image_name": "Animal-Ocean-1.png", "image": {"bytes": b"not an image",
                                                                      "path": "x.png"}}],
                     ["image"])
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    data, "--subsets", "ICON", "--out", out, "--no-progress", "--no-cache")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: nothing was evaluated: every row was skipped (1 row; see the lines above); "
        f"{out} holds the empty run")
    page = (out / "report.html").read_text()
    assert "no records" in page
    again = invoke("report", out)
    assert again.exit_code == 0, again.output
    assert "no records" in (out / "report.html").read_text()
    assert load(out, "run.json")["counts"]["records"] == 0


def test_salbench_run_with_every_row_skipped_still_reports(serve, tmp_path):
    data = tmp_path / "data"
    write_hf_parquet(data / "P3" / "test-00000.parquet",
                     [{"image": {"bytes": b"nope", "path": "x.png"}, "question": QUESTION,
                       "answer": "color", "image_id": "a"}], ["image"])
    server = serve()
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", data, "--configs", "P3", "--out", out,
                    "--no-progress")
    assert result.exit_code == 2
    assert "nothing was evaluated" in result.stderr
    assert "no records" in (out / "report.html").read_text()
    assert invoke("report", out).exit_code == 0


def test_report_of_an_empty_run_from_an_older_version(tmp_path):
    """A run directory with run.json, empty metrics and no journal (killed before the first
    sample, or written by a version that did not refuse empty selections)."""
    import json

    out = tmp_path / "run"
    out.mkdir()
    for benchmark, metrics in (("illusionbench", {"original": {"ICON": {}}}),
                               ("salbench", {})):
        (out / "run.json").write_text(json.dumps({
            "benchmark": benchmark, "options": {}, "backend": {"kind": "openai", "model": "m"},
            "status": "finished", "sessions": []}))
        (out / "metrics.json").write_text(json.dumps(metrics))
        result = invoke("report", out)
        assert result.exit_code == 0, result.output
        assert "no records" in (out / "report.html").read_text()


def test_benchmark_sections_render_metrics_without_scored_samples(tmp_path):
    """The sections themselves never crash on blocks that have no scored sample (a subset
    whose every request failed, or an empty run)."""
    from visioneval.benchmarks.illusionbench import metrics as ib_metrics
    from visioneval.benchmarks.salbench.metrics import summarize_config
    from visioneval.benchmarks.salbench.spec import CONFIGS
    from visioneval.core import registry
    from visioneval.core.rundir import OpenedRun
    from visioneval.core.runfiles import BackendInfo, RunInfo

    ib = ib_metrics.summarize([], ["original", "lmms-strict", "lmms-recall"], ["ICON"],
                              ["shape", "scene"], False)
    backend = BackendInfo(kind="builtin", model="random")
    view = OpenedRun(tmp_path, RunInfo(benchmark="illusionbench", backend=backend), ib)
    assert [s.title for s in registry.definition("illusionbench").sections(view)]
    sal = {"P3": summarize_config([], CONFIGS["P3"].classes)}
    view = OpenedRun(tmp_path, RunInfo(benchmark="salbench", backend=backend), sal)
    assert [s.title for s in registry.definition("salbench").sections(view)]
