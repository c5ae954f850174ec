"""A run's files are typed records (core/runfiles.py): a benchmark's plan is checked where it
is recorded, and a benchmark's summary is checked against the model of metrics.json its
definition declares before the file is written; a benchmark of your own needs neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import invoke, load

from visioneval.benchmarks.salbench.metrics import SalBenchMetrics
from visioneval.core import registry
from visioneval.core.runfiles import BackendInfo, Metrics, RunInfo
from visioneval.core.store import RunStore
from visioneval.runs.session import metrics_model_for


def _salbench(synth_data, out: Path) -> None:
    result = invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    synth_data, "--configs", "P3", "--num-samples", "4", "--out", out,
                    "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output


def test_each_registered_benchmark_declares_its_metrics_model():
    for name in registry.names():
        model = registry.definition(name).metrics_model
        assert model is not Metrics, name
        assert model.model_json_schema()  # documentable (docs/run-files.md)


def test_a_summary_its_model_does_not_describe_is_not_written(synth_data, tmp_path):
    out = tmp_path / "run"
    _salbench(synth_data, out)
    written = (out / "metrics.json").read_bytes()
    metrics = load(out)
    store = RunStore.open(out)
    assert metrics_model_for(store.info) is SalBenchMetrics
    (out / "metrics.json").unlink()
    wrong_type = json.loads(written)
    wrong_type["P3"]["strict"]["macro_f1"] = "high"
    with pytest.raises(ValueError, match=r"metrics.json: .*P3\.strict\.macro_f1: "):
        store.write_metrics(wrong_type, SalBenchMetrics)
    unknown = json.loads(written)
    unknown["P3"]["strict"]["macro_f2"] = 0.5
    with pytest.raises(ValueError, match=r"P3\.strict\.macro_f2: Extra inputs are not "):
        store.write_metrics(unknown, SalBenchMetrics)
    assert not (out / "metrics.json").exists()
    store.write_metrics(metrics, SalBenchMetrics)  # what the benchmark wrote: as it was
    assert (out / "metrics.json").read_bytes() == written


def test_a_benchmark_of_your_own_writes_any_json_object(tmp_path):
    info = RunInfo(benchmark="mine", definition="mine.py:Mine",
                   backend=BackendInfo(kind="builtin", model="random"))
    store = RunStore.create(tmp_path / "run", info)
    assert metrics_model_for(info) is Metrics  # its code is not imported to find one
    store.write_metrics({"anything": [1, {"goes": None}]})
    assert store.read_metrics() == {"anything": [1, {"goes": None}]}
    with pytest.raises(ValueError, match="not a JSON object but list"):
        store.write_metrics([1, 2])


MINE = """
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.records import Sample, user
from pydantic import BaseModel


class Options(BaseModel):
    n: int = 3


class Mine(Benchmark[Options]):
    name = "mine"
    builtin_models = ("random",)  # picks among the prompt's options

    def samples(self):
        for i in range(self.options.n):
            yield Sample(id=f"q{i}", group="all", target="yes",
                         messages=(user("Is this a question? Options: yes, no"),))

    def score(self, sample, text):
        return {}, {"exact": {"correct": float(text.strip().lower() == "yes")}}

    def plan(self):
        return {"benchmark": self.name, "options": self.options.model_dump(),
                "dataset": DATASET}


class MineDefinition(BenchmarkDefinition):
    summary = "Yes or no."
    benchmark = Mine
"""


def _mine(tmp_path: Path, dataset: dict, *extra: str):
    (tmp_path / "mine.py").write_text(f"DATASET = {dataset!r}\n" + MINE)
    return invoke("run", "mine.py:MineDefinition", "--backend", "builtin", "--model",
                  "random", "--out", tmp_path / "run", "--no-progress", "--no-report", *extra)


def test_a_plan_that_is_not_one_stops_the_run_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _mine(tmp_path, {"source": "my questions"})  # no fingerprint
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "benchmark mine: plan() dataset.fingerprint: Field " \
        "required" in lines[0], result.output
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_a_plan_given_as_a_dict_is_recorded_as_the_model_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dataset = {"source": "my questions", "fingerprint": "v1", "questions": 3}
    result = _mine(tmp_path, dataset, "-o", "n=2")
    assert result.exit_code == 0, result.output
    info = load(tmp_path / "run", "run.json")
    assert info["dataset"] == dataset  # a key of its own is kept
    assert info["options"] == {"n": 2}
