"""The generic image-question benchmark end to end: the engine against the loopback server
over real HTTP, metrics.json, results.csv, the report page, a compare table and resume."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import journal, load
from rich.console import Console

from visioneval.backends.registry import BackendSpec
from visioneval.commands.resume import resume
from visioneval.commands.run import run
from visioneval.core import registry, rundir
from visioneval.core.records import GenerationSettings
from visioneval.core.store import RunDirError
from visioneval.report.compare import compare, to_markdown
from visioneval.report.page import write_report
from visioneval.runs.output import Output
from visioneval.runs.request import ResumeGiven, ResumeRequest
from visioneval.runs.session import EngineOptions
from visioneval.runs.spec import RunSpec

EXAMPLE = Path(__file__).parent.parent / "examples" / "vqa"
FAST = EngineOptions(concurrency=4, backoff_base_s=0.01, backoff_cap_s=0.05)


def given(server, **options) -> ResumeGiven:
    """A resume's command line: the loopback's URL named again (it is not a hosted API)."""
    return ResumeGiven(base_urls=(server.base_url + "/v1",), options=options)


def output() -> Output:
    return Output(Console(width=80, record=True), Console(stderr=True, width=200),
                  progress=False, report=False)


def go(server, options: dict, out: Path, model: str = "m", kind: str = "openai",
       engine: EngineOptions = FAST, shown: Output | None = None) -> int:
    base = server.base_url + ("/v1" if kind == "openai" else "")
    spec = BackendSpec(kind=kind, model=model, base_url=base,
                       api_key_env="ANTHROPIC_API_KEY" if kind == "anthropic" else None)
    return run(RunSpec.of(registry.build("vqa", options), backend=spec,
                          generation=GenerationSettings(), engine=engine, out=out),
               shown or output())


def choice_options(data: Path = EXAMPLE / "questions.jsonl") -> dict:
    return {"data": str(data), "scorer": "choice", "group_col": "category"}


@pytest.mark.parametrize("kind", ["openai", "ollama", "anthropic"])
def test_a_choice_run_writes_metrics_tables_and_report(serve, tmp_path, kind, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test")
    server = serve(answer=lambda prompt: "The answer is (B).")
    out = tmp_path / "run"
    shown = output()
    assert go(server, choice_options(), out, kind=kind, shown=shown) == 0
    metrics = load(out)
    # Three of the twelve example questions have B as their answer, one per category.
    overall = metrics["overall"]
    low, high = overall.pop("accuracy_ci95")  # 3 of 12 right: a wide interval around 0.25
    assert low < 0.25 < high and overall.pop("accuracy_se") > 0
    assert overall == {"n": 12, "n_errors": 0, "n_unparsed": 0, "n_ambiguous": 0,
                       "accuracy": 0.25}
    assert set(metrics["groups"]) == {"colour", "count", "shape"}
    assert all(b["accuracy"] == 0.25 for b in metrics["groups"].values())
    rows = list(csv.reader((out / "results.csv").open()))
    assert rows[0] == ["model", "group", "n", "errors", "unparsed", "ambiguous", "accuracy",
                       "accuracy_ci95_low", "accuracy_ci95_high"]
    assert rows[-1] == ["m", "overall", "12", "0", "0", "0", "25.0", f"{100 * low:.1f}",
                        f"{100 * high:.1f}"]
    table = shown.console.export_text().split("samples recorded")[0]
    overall_line = next(line for line in table.splitlines() if "overall" in line)
    assert overall_line.split()[-3:] == ["25.0", f"[{100 * low:.1f},", f"{100 * high:.1f}]"]
    assert max(len(line) for line in table.splitlines()) <= 80
    record = journal(out)[0]
    assert record["parsed"] == {"choice": "B"} and record["target"] == "B"
    assert record["prompt"][0]["parts"][1].endswith(
        "D. yellow\nAnswer with the option's letter from the given choices directly.")
    info = load(out, "run.json")
    assert info["benchmark"] == "vqa" and info["dataset"]["source"].endswith("questions.jsonl")
    assert len(info["dataset"]["fingerprint"]) == 64


def test_report_and_compare_show_unparsed_and_ambiguous_answers(serve, tmp_path):
    answers = {"m": lambda p: "Answer: B", "m2": lambda p: "A or C" if "colour" in p.text
               else "no idea"}
    server = serve(models=("m", "m2"),
                   answer=lambda prompt: "Answer: B")
    runs = []
    for model, answer in answers.items():
        server.script.answer = answer
        runs.append(tmp_path / model)
        assert go(server, choice_options(), runs[-1], model=model) == 0
    second = load(runs[1])["overall"]
    assert (second["n"], second["n_unparsed"], second["n_ambiguous"], second["accuracy"]) == \
        (12, 12, 4, 0.0)
    definition = registry.definition("vqa")
    row = definition.browser_row(next(rundir.load(runs[0]).iter_records()))
    assert row == {"t": "B. red", "labels": ["B"], "v": {"choice": {"a": "B. red", "ok": True}},
                   "meta": "questions.jsonl row 1"}
    rows = [definition.browser_row(r) for r in rundir.load(runs[1]).iter_records()]
    assert {r["v"]["choice"]["a"] for r in rows} == {"(ambiguous)", "(unparsed)"}
    assert all(r["v"]["choice"]["ok"] is False for r in rows)
    page = write_report(runs[1]).read_text()
    assert "Results (percent)" in page and "choice accuracy per group" in page
    assert "(ambiguous)" in page and "(unparsed)" in page
    table = compare(runs)
    assert table.header == ["Model", "Scorer", "Accuracy", "Unparsed", "colour accuracy",
                            "count accuracy", "shape accuracy", "Cost"]
    assert table.rows == [["m", "choice", "25.0", "0.0", "25.0", "25.0", "25.0", "unknown"],
                          ["m2", "choice", "0.0", "100.0", "0.0", "0.0", "0.0", "unknown"]]
    assert not table.flags
    assert "| m2 | choice | 0.0 |" in to_markdown(table)


def test_number_and_set_scorers_through_the_engine(serve, tmp_path):
    rows = [{"image": f"images/{name}.png", "question": q, "answer": a}
            for name, q, a in [("two_circles", "How many circles?", "2"),
                               ("three_squares", "How many squares?", 3),
                               ("four_triangles", "How many triangles?", "4")]]
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE / "images", data / "images")
    (data / "count.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = serve(answer=lambda prompt: "I count three." if "squares" in prompt.text
                   else "2 of them")
    assert go(server, {"data": str(data), "scorer": "number"}, tmp_path / "n") == 0
    assert load(tmp_path / "n")["overall"]["accuracy"] == pytest.approx(2 / 3)
    labels = tmp_path / "labels"
    shutil.copytree(EXAMPLE / "images", labels / "images")
    (labels / "l.jsonl").write_text("".join(json.dumps(
        {"image": "images/circle_and_square.png", "question": "Which colours?",
         "answer": answer}) + "\n" for answer in ("green, red", "red")))
    server.script.answer = lambda prompt: "Red, green."
    assert go(server, {"data": str(labels), "scorer": "set"}, tmp_path / "s") == 0
    block = load(tmp_path / "s")["overall"]
    assert block["exact_match"] == block["accuracy"] == 0.5
    # per label: green P=1/2 R=1, red P=1 R=1 -> macro F1 (2/3 + 1) / 2
    assert block["macro_f1"] == pytest.approx((2 / 3 + 1) / 2, abs=1e-6)


def test_resume_retries_failed_samples_and_refuses_changed_data(serve, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data, ignore=shutil.ignore_patterns("*.py"))
    options = choice_options(data / "questions.jsonl")
    server = serve(answer=lambda prompt: "B", fail_rate=0.4, faults=("500",), seed=2)
    out = tmp_path / "run"
    once = EngineOptions(max_attempts=1, backoff_base_s=0.0, backoff_cap_s=0.0)
    assert go(server, options, out, engine=once) == 1
    failed = [r for r in journal(out) if r["response"]["error"]]
    assert failed and load(out)["overall"]["n_errors"] == len(failed)
    server.script.fail_rate = 0.0
    before = server.stats.requests
    assert resume(ResumeRequest(out, "vqa", given(server)), output()) == 0
    assert server.stats.requests - before == len(failed)
    clean = tmp_path / "clean"
    assert go(server, options, clean) == 0
    assert load(out) == load(clean)
    (data / "images" / "circle_red.png").write_bytes(
        (data / "images" / "square_blue.png").read_bytes())
    with pytest.raises(RunDirError, match="the dataset changed since this run started"):
        resume(ResumeRequest(out, "vqa", given(server)), output())
