"""A user's own benchmark, in a file of their own: from the command line (`visioneval run
file.py:Definition`), resumed from another folder, reported, and from Python."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from cli_helpers import invoke, load

import visioneval

FIXTURE = Path(__file__).parents[1] / "examples" / "own_benchmark" / "colours.py"


@pytest.fixture
def user_file(tmp_path) -> Path:
    target = tmp_path / "work" / "mybench.py"
    target.parent.mkdir()
    shutil.copy(FIXTURE, target)
    return target


def test_run_a_user_benchmark_file_then_resume_from_elsewhere(user_file, tmp_path,
                                                               monkeypatch):
    monkeypatch.chdir(user_file.parent)
    out = tmp_path / "run"
    result = invoke("run", "mybench.py:ColoursDefinition", "--backend", "builtin", "--model",
                    "random", "-o", "n=9", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    info = load(out, "run.json")
    assert info["benchmark"] == "colours" and info["options"] == {"n": 9}
    assert info["definition"] == f"{user_file.resolve()}:ColoursDefinition"
    assert load(out)["n"] == 9
    # The random baseline picks among the prompt's "Options: red, green, blue", as a user
    # benchmark's chance level should be.
    assert {json.loads(line)["parsed"]["answer"] for line in
            (out / "samples.jsonl").read_text().splitlines()} <= {"red", "green", "blue"}
    assert "colours: accuracy" in result.output and "over 9 answered samples" in result.output
    html = (out / "report.html").read_text()
    assert "no benchmark tables" not in result.output and "<!doctype html>" in html
    # Resumed from another folder: run.json says where the definition lives, but a run
    # directory alone never makes visioneval import code: the user names it again.
    monkeypatch.chdir(tmp_path)
    lines = (out / "samples.jsonl").read_text().splitlines()
    (out / "samples.jsonl").write_text("\n".join(lines[:4]) + "\n")
    refused = invoke("run", "--resume", out, "--no-progress")
    assert refused.exit_code == 2 and f"visioneval run {info['definition']} --resume" \
        in refused.stderr
    result = invoke("run", info["definition"], "--resume", out, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "4 done before" in result.output and load(out)["n"] == 9


def test_user_benchmark_options_are_checked(user_file, tmp_path, monkeypatch):
    monkeypatch.chdir(user_file.parent)
    args = ["run", "mybench.py:ColoursDefinition", "--backend", "builtin", "--model",
            "random", "--out", tmp_path / "r"]
    result = invoke(*args, "-o", "size=3")
    assert result.exit_code == 2 and "has no option size" in result.stderr
    result = invoke(*args, "-o", "n=0")
    assert result.exit_code == 2 and "--n: Input should be greater than or equal to 1" \
        in result.stderr
    result = invoke("run", "nowhere.py:X", "--backend", "builtin", "--model", "random")
    assert result.exit_code == 2 and "cannot load benchmark 'nowhere.py:X'" in result.stderr


def test_registered_benchmark_through_run(synth_data, tmp_path):
    out = tmp_path / "r"
    result = invoke("run", "salbench", "--backend", "builtin", "--model", "random",
                    "-o", f"data_dir={synth_data}", "-o", "configs=P3,P3_box",
                    "-o", "num_samples=3", "--out", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    info = load(out, "run.json")
    assert "definition" not in info and info["options"]["configs"] == ["P3", "P3_box"]
    # A registered run resumes with its own command too.
    assert invoke("salbench", "--resume", out, "--no-progress", "--no-report").exit_code == 0


def test_python_api_runs_a_registered_benchmark_against_a_server(serve, synth_data,
                                                                 tmp_path):
    server = serve(models=("m",))
    result = visioneval.run("salbench", model="m", base_url=server.base_url + "/v1",
                            options={"data_dir": synth_data, "configs": ["P3"],
                                     "num_samples": 5}, out=tmp_path / "api")
    assert (result.n_records, result.n_errors, result.status) == (5, 0, "finished")
    assert result.metrics["P3"]["strict"]["n"] == 5
    assert result.report is not None and result.report.exists()
    assert server.stats.answered == 5
    again = visioneval.load(tmp_path / "api")
    assert again.metrics == result.metrics


def test_python_api_takes_a_definition_object(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("colours_benchmark", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "colours_benchmark", module)  # as `import` would
    result = visioneval.run(module.ColoursDefinition, model="random", backend="builtin",
                            options={"n": 4}, out=tmp_path / "obj", report=False)
    assert result.n_records == 4 and result.metrics["n"] == 4
    info = json.loads((tmp_path / "obj" / "run.json").read_text())
    # Loaded from a file, not importable by name: the file is recorded, and found again.
    assert info["definition"] == f"{FIXTURE.resolve()}:ColoursDefinition"
    from visioneval.report.page import write_report

    assert "colours" in write_report(tmp_path / "obj").read_text()


def test_own_metrics_are_on_the_page_and_a_page_without_the_code_goes_beside_it(
        user_file, tmp_path, monkeypatch):
    """colours.py summarizes its own way ({"n", "accuracy"}): its page shows the accuracy
    table recomputed from the records and every number of metrics.json, and the browser
    shows each answer. `report` without --definition never replaces that page."""
    monkeypatch.chdir(user_file.parent)
    out = tmp_path / "run"
    assert invoke("run", "mybench.py:ColoursDefinition", "--backend", "builtin", "--model",
                  "random", "-o", "n=9", "--out", out, "--no-progress").exit_code == 0
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    right = sum(r["scores"]["exact"]["correct"] for r in records)
    html = (out / "report.html").read_text()
    assert "Results (percent)" in html and "Metrics (metrics.json)" in html
    assert f"<td>{100 * right / 9:.1f}</td>" in html.replace(' class="num"', "")
    assert f'"a":"{records[0]["parsed"]["answer"]}"' in html.replace(" ", "")
    full = (out / "report.html").read_bytes()

    reduced = invoke("report", out)
    assert reduced.exit_code == 0, reduced.output
    assert (out / "report.html").read_bytes() == full
    assert "report-generic.html: drawn without your benchmark's code, beside report.html" \
        in reduced.stdout
    generic = (out / "report-generic.html").read_text()
    assert "Results (percent)" in generic and "a run of your own benchmark" in generic
    named = invoke("report", out, "--definition", f"{user_file}:ColoursDefinition")
    assert named.exit_code == 0 and "report-generic" not in named.stdout
    assert (out / "report.html").read_text().count("Metrics (metrics.json)") == 1
