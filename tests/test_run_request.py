"""A run as one typed value: `visioneval.run_request(RunSpec(...))` runs what the command
line would, and a shard's spec records its shard (against the loopback server)."""

from __future__ import annotations

import json

import pytest

import visioneval
from visioneval.backends.registry import BackendSpec
from visioneval.core import registry
from visioneval.core.records import GenerationSettings
from visioneval.engine.options import EngineOptions
from visioneval.runs.spec import RunSpec
from visioneval.shards import Shard


def _request(server, synth_data, out, shard=None, ray=None) -> RunSpec:
    benchmark = registry.build("salbench", {"data_dir": str(synth_data), "configs": ["P3"],
                                            "num_samples": 6})
    spec = BackendSpec(kind="openai", model="m", base_url=server.base_url + "/v1")
    where = {"executor": "ray", "shards": ray} if ray else {}
    return RunSpec.of(benchmark, backend=spec, generation=GenerationSettings(max_tokens=64),
                      out=out, shard=shard, **where)


def test_a_run_request_runs_and_records_its_settings(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    result = visioneval.run_request(_request(server, synth_data, tmp_path / "r"), report=False)
    assert (result.n_records, result.n_errors, result.status) == (6, 0, "finished")
    info = json.loads((tmp_path / "r" / "run.json").read_text())
    assert info["generation"]["max_tokens"] == 64 and info["backend"]["model"] == "m"


def test_a_shard_request_runs_its_part_only(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    out = tmp_path / "s"
    first = visioneval.run_request(_request(server, synth_data, out, Shard(1, 2)),
                                   report=False)
    info = json.loads((out / "run.json").read_text())
    assert info["shard"] == {"index": 1, "count": 2}
    assert 0 < first.n_records < 6


def test_a_ray_request_is_for_the_command_line(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    with pytest.raises(ValueError, match="--executor ray"):
        visioneval.run_request(_request(server, synth_data, tmp_path / "x", ray=2))
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_the_python_api_stops_once_the_answer_is_known(serve, tmp_path):
    from visioneval.benchmarks.salbench.synth import write_synthetic

    data = tmp_path / "data"
    write_synthetic(data, 40, seed=3)  # 120 samples over three configs
    server = serve(models=("m",))
    result = visioneval.run("salbench", model="m", base_url=server.base_url + "/v1",
                            options={"data_dir": str(data), "splits": ["synthetic"]},
                            out=tmp_path / "r", report=False, target_ci=40,
                            engine=EngineOptions(concurrency=2, use_cache=False))
    rule = json.loads((tmp_path / "r" / "run.json").read_text())["stopping"]
    assert rule["target_ci"] == 40 and rule["samples"] == 120
    assert rule["stopped"] and rule["n"] == result.n_records < 120
    assert rule["ci"][1] - rule["ci"][0] <= 0.40


@pytest.mark.slow
def test_the_python_api_sends_a_batch(serve, synth_data, tmp_path):
    from visioneval.loopback.batches import BatchScript

    server = serve(models=("m",), batches=BatchScript(delay_s=0.05))
    result = visioneval.run("salbench", model="m", base_url=server.base_url + "/v1",
                            options={"data_dir": str(synth_data), "configs": ["P3"]},
                            out=tmp_path / "b", report=False, batch=True,
                            engine=EngineOptions(use_cache=False))
    assert (result.n_records, result.n_errors) == (8, 0)
    info = json.loads((tmp_path / "b" / "run.json").read_text())
    assert [b["status"] for b in info["batch"]["batches"]] == ["collected"]
    assert server.batch_apis.book.batches == 1


@pytest.mark.parametrize(("extra", "message"), [
    ({"batch": True, "target_ci": 5}, "use one or the other"),
    ({"target_ci": 5, "variants": ["blind"]}, "variants in a run of their own"),
    ({"target_ci": 0}, "more than 0"),
    ({"batch": True, "engine": EngineOptions(max_cost=1.0)}, "--max-cost"),
])
def test_the_python_api_refuses_what_cannot_go_together(synth_data, tmp_path, extra, message):
    with pytest.raises(ValueError, match=message):
        visioneval.run("salbench", model="m", base_url="http://127.0.0.1:9/v1",
                       options={"data_dir": str(synth_data), "configs": ["P3"]},
                       out=tmp_path / "x", **extra)
    assert not (tmp_path / "x").exists()


def test_a_misspelt_argument_is_refused_naming_the_nearest(synth_data, tmp_path):
    with pytest.raises(TypeError, match="'temprature' .*did you mean 'temperature'"):
        visioneval.run("salbench", model="m", temprature=0.5,  # type: ignore[call-arg]
                       options={"data_dir": str(synth_data)}, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()
