"""`visioneval suite`: several benchmarks x models in one command, against real loopback
servers; each run an ordinary run directory, one comparison page, resumable as a whole."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load, spawn

ROOT = Path(__file__).parent.parent
VQA = ROOT / "examples" / "vqa" / "questions.jsonl"


def write_suite(path: Path, servers: dict[str, object], synth_data: Path, illusion_data: Path,
                extra: str = "", concurrency: int = 2, vary: str = "") -> Path:
    models = "".join(
        f'''
[[models]]
name = "{name}"
backend = "openai"
model = "m"
base_url = "{server.base_url}/v1"
price_in = 0
price_out = 0
concurrency = {concurrency}
''' for name, server in servers.items())
    path.write_text(f'''name = "t"
{models}
[[benchmarks]]
name = "salbench"
options = {{ data_dir = "{synth_data}", configs = ["P3"] }}
{vary}

[[benchmarks]]
name = "illusionbench"
options = {{ data_dir = "{illusion_data}", subsets = ["ICON"], tasks = ["shape"] }}

[[benchmarks]]
name = "vqa"
options = {{ data = "{VQA}", scorer = "choice", group_col = "category" }}

[engine]
backoff_base = 0.01
backoff_cap = 0.05
{extra}
''')
    return path


def suite(file: Path, out: Path, *extra: str):
    return invoke("suite", file, "--out", out, "--no-progress", *extra)


@pytest.mark.slow
def test_one_command_runs_every_benchmark_on_every_model(serve, synth_data, illusion_data,
                                                         tmp_path):
    # Each server holds at most 2 requests at a time (a third gets 429): the suite's runs on
    # one server must go one after another at its concurrency, never side by side.
    a = serve(latency_s=0.02, max_in_flight=2)
    b = serve(latency_s=0.02, max_in_flight=2, checkpoint="other")
    for server in (a, b):
        server.stats.keep_arrivals = True
    file = write_suite(tmp_path / "s.toml", {"alpha": a, "beta": b}, synth_data,
                       illusion_data)
    out = tmp_path / "suite"
    result = suite(file, out)
    assert result.exit_code == 0, result.output
    assert a.stats.over_limit == b.stats.over_limit == 0
    assert a.stats.most_in_flight <= 2 and b.stats.most_in_flight <= 2
    # The two servers are two lanes, side by side: their busy times overlap.
    assert min(b.stats.arrivals) < max(a.stats.arrivals)
    runs = [out / bench / model for bench in ("salbench", "illusionbench", "vqa")
            for model in ("alpha", "beta")]
    for run in runs:  # ordinary run directories, each with its report
        info = load(run, "run.json")
        assert info["status"] == "finished" and (run / "report.html").is_file()
    record = load(out, "suite.json")
    assert [r["status"] for r in record["runs"]] == ["finished"] * 6
    assert record["status"] == "finished"
    page = (out / "suite.html").read_text()
    for title in ("salbench", "illusionbench", "vqa", "Runs"):
        assert f"<h2>{title}</h2>" in page
    rows = list(csv.DictReader(io.StringIO((out / "suite.csv").read_text())))
    assert {r["benchmark"] for r in rows} == {"salbench", "illusionbench", "vqa"}
    vqa_acc = {r["model"]: float(r["value"]) for r in rows
               if r["benchmark"] == "vqa" and r["column"] == "Accuracy"}
    assert vqa_acc == {f"m ({m})": round(100 * load(out / "vqa" / m)["overall"]["accuracy"], 1)
                       for m in ("alpha", "beta")}
    printed = result.stdout.splitlines()
    for title in ("salbench", "illusionbench", "vqa", "Runs"):  # a table per benchmark
        assert title in printed, printed
    assert not any(ln.startswith("|") for ln in printed)  # drawn, not Markdown
    accuracy = f"{round(100 * load(out / 'vqa' / 'alpha')['overall']['accuracy'], 1):.1f}"
    assert any(ln.split()[:2] == ["m", "(alpha)"] and accuracy in ln.split() for ln in printed)
    # Running it again sends nothing: every run is done.
    sent = a.stats.requests + b.stats.requests
    again = suite(file, out)
    assert again.exit_code == 0 and a.stats.requests + b.stats.requests == sent
    assert [r["status"] for r in load(out, "suite.json")["runs"]] == ["done before"] * 6


@pytest.mark.slow
def test_a_failed_run_does_not_stop_the_others_and_the_same_command_resumes(
        serve, synth_data, illusion_data, tmp_path):
    good = serve()
    flaky = serve(fail_rate=0.5, faults=("500",), seed=7, checkpoint="flaky")
    dead = serve(checkpoint="dead")
    file = write_suite(tmp_path / "s.toml", {"good": good, "flaky": flaky, "dead": dead},
                       synth_data, illusion_data, extra="max_attempts = 1")
    dead_url = dead.base_url
    dead.script.required_key = "nobody-has-this"  # its preflight is refused: its runs fail
    out = tmp_path / "suite"
    result = suite(file, out)
    assert result.exit_code == 1, result.output
    runs = {r["label"]: r for r in load(out, "suite.json")["runs"]}
    assert all(runs[f"{b} · good"]["status"] == "finished"
               for b in ("salbench", "illusionbench", "vqa"))
    assert all(runs[f"{b} · dead"]["status"] == "failed" and
               dead_url in runs[f"{b} · dead"]["message"]
               for b in ("salbench", "illusionbench", "vqa"))
    with_errors = [r for label, r in runs.items() if label.endswith("flaky")]
    assert all(r["status"] == "finished with errors" for r in with_errors)
    assert "runs failed" in result.stderr
    # Fixed, the same command finishes what was left: failed samples only, nothing twice.
    flaky.script.fail_rate = 0.0
    dead.script.required_key = None
    failed = sum(r["errors"] for r in with_errors)
    sent_flaky, sent_good = flaky.stats.requests, good.stats.requests
    again = suite(file, out)
    assert again.exit_code == 0, again.output
    assert flaky.stats.requests - sent_flaky == failed
    assert good.stats.requests == sent_good
    statuses = {r["label"]: r["status"] for r in load(out, "suite.json")["runs"]}
    assert {s for label, s in statuses.items() if label.endswith("good")} == {"done before"}
    assert {s for label, s in statuses.items() if not label.endswith("good")} == {"finished"}


def test_vary_makes_a_run_per_value_and_the_dry_run_sends_nothing(serve, synth_data,
                                                                  illusion_data, tmp_path):
    server = serve()
    file = write_suite(tmp_path / "s.toml", {"one": server}, synth_data, illusion_data,
                       vary="vary = { shots = [0, 3] }")
    out = tmp_path / "suite"
    dry = suite(file, out, "--dry-run")
    assert dry.exit_code == 0, dry.output
    text = flat(dry.stdout)
    assert "salbench shots=0 · one" in text and "salbench shots=3 · one" in text
    assert "total" in text and server.stats.requests == 0 and not out.exists()
    result = suite(file, out)
    assert result.exit_code == 0, result.output
    assert load(out / "salbench-shots0" / "one", "run.json")["options"]["shots"] == 0
    assert load(out / "salbench-shots3" / "one", "run.json")["options"]["shots"] == 3


def test_a_benchmark_s_variants_are_sent_in_every_run_and_resumed_alike(serve, synth_data,
                                                                        illusion_data,
                                                                        tmp_path):
    server = serve()
    file = write_suite(tmp_path / "s.toml", {"one": server}, synth_data, illusion_data,
                       vary='variants = ["blind", "jpeg:50"]')
    out = tmp_path / "suite"
    result = suite(file, out)
    assert result.exit_code == 0, result.output
    run = out / "salbench" / "one"
    assert [v["name"] for v in load(run, "run.json")["variants"]] == ["blind", "jpeg:50"]
    assert [v["name"] for v in load(run, "variants.json")["variants"]] == ["blind", "jpeg:50"]
    assert "variants" not in load(out / "illusionbench" / "one", "run.json")
    sent = server.stats.requests
    again = suite(file, out)  # everything done: nothing is sent again
    assert again.exit_code == 0, again.output
    assert server.stats.requests == sent
    file.write_text(file.read_text().replace('["blind", "jpeg:50"]', '["blind"]'))
    changed = suite(file, out)
    assert "variants blind, jpeg:50 there, blind in the suite" in " ".join(
        changed.output.split())


def test_a_suite_file_never_holds_a_key(tmp_path, synth_data, illusion_data, serve):
    server = serve()
    file = write_suite(tmp_path / "s.toml", {"m": server}, synth_data, illusion_data)
    text = file.read_text()
    cases = {
        "models[1].api_key": text.replace('price_in = 0', 'api_key = "sk-1"\nprice_in = 0'),
        "base_url": text.replace(server.base_url, server.base_url.replace(
            "http://", "http://user:pw@")),
        "models[1].backend": text.replace('backend = "openai"', 'backend = "azure"'),
    }
    for where, content in cases.items():
        file.write_text(content)
        result = suite(file, tmp_path / "x")
        lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert str(file) in lines[0] and where in lines[0], lines[0]
    assert server.stats.requests == 0


def test_a_changed_suite_file_is_said_for_the_runs_it_changed(serve, synth_data,
                                                             illusion_data, tmp_path):
    server = serve()
    file = write_suite(tmp_path / "s.toml", {"m": server}, synth_data, illusion_data)
    out = tmp_path / "suite"
    assert suite(file, out).exit_code == 0
    file.write_text(file.read_text().replace('configs = ["P3"]', 'configs = ["P3_box"]'))
    result = suite(file, out)
    assert result.exit_code == 1
    runs = {r["label"]: r for r in load(out, "suite.json")["runs"]}
    assert runs["salbench · m"]["status"] == "failed"
    assert "the suite file changed since it ran" in runs["salbench · m"]["message"]
    assert "options configs" in runs["salbench · m"]["message"]
    assert runs["vqa · m"]["status"] == "done before"


def test_benchmarks_on_the_command_line(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "suite"
    result = invoke("suite", "--benchmarks", "salbench,vqa", "--backend", "openai",
                    "--model", "m", "--base-url", server.base_url + "/v1",
                    "-o", f"salbench.data_dir={synth_data}", "-o", "salbench.configs=P3",
                    "-o", f"vqa.data={VQA}", "-o", "vqa.scorer=choice", "--out", out,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    assert load(out / "salbench" / "m", "run.json")["options"]["configs"] == ["P3"]
    assert len(journal(out / "vqa" / "m")) == 12
    wrong = invoke("suite", "--benchmarks", "salbench", "--backend", "openai", "--model", "m",
                   "-o", "vqa.data=x", "--out", out)
    assert wrong.exit_code == 2 and "benchmark.option=value" in wrong.stderr


@pytest.mark.slow
def test_an_interrupted_suite_resumes_with_the_same_command(serve, synth_data, illusion_data,
                                                           tmp_path):
    a = serve(latency_s=0.05)
    b = serve(latency_s=0.05, checkpoint="b")
    file = write_suite(tmp_path / "s.toml", {"a": a, "b": b}, synth_data, illusion_data)
    out = tmp_path / "suite"
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = spawn("suite", file, "--out", out, "--no-progress", env=env)
    deadline = time.time() + 60
    while time.time() < deadline and a.stats.answered + b.stats.answered < 10:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    said = flat(err)
    assert f"continue every unfinished run with: {sys.executable} -m visioneval suite {file} " \
        f"--out {out}" in said and "Traceback" not in err
    assert load(out, "suite.json")["status"] == "interrupted"
    sent = a.stats.requests + b.stats.requests
    again = spawn("suite", file, "--out", out, "--no-progress", env=env)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    runs = load(out, "suite.json")["runs"]
    assert {r["status"] for r in runs} <= {"finished", "done before"}
    total = sum(len({r["id"] for r in journal(Path(x["directory"]))}) for x in runs)
    # Each sample once; only those in flight at Ctrl-C may have been sent twice.
    assert a.stats.requests + b.stats.requests - sent <= total
    assert os.path.isfile(out / "suite.html")
    assert json.loads((out / "suite.json").read_text())["status"] == "finished"


@pytest.mark.slow
def test_published_as_puts_a_model_beside_the_papers_row(synth_data, tmp_path):
    file = tmp_path / "p.toml"
    file.write_text(f'''
[[models]]
name = "baseline"
backend = "builtin"
model = "popout"
published_as = "GPT-4o"

[[models]]
name = "chance"
backend = "builtin"
model = "random"

[[benchmarks]]
name = "salbench"
options = {{ data_dir = "{synth_data}", configs = ["P3"] }}
''')
    out = tmp_path / "suite"
    result = suite(file, out)
    assert result.exit_code == 0, result.output
    page = (out / "suite.html").read_text()
    assert "beside GPT-4o" in page and "matched by the suite file&#39;s published_as" in page
    assert "Not beside a published row" in page and "random" in page
    assert "beside GPT-4o" in result.stdout
