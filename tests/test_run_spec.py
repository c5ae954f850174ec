"""A run as one value, `RunSpec`: written as JSON and read back unchanged, recorded in run.json
so that a finished run can be run again (`visioneval run --spec run.json --out NEW`, against
the loopback server: the same metrics), and every combination of settings a run cannot have
refused once, in one line, whichever way the run came in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import invoke, salbench_args

from visioneval.backends.registry import BackendSpec
from visioneval.core.engine_options import EngineOptions
from visioneval.core.records import GenerationSettings
from visioneval.core.store import RunStore
from visioneval.runs.spec import RunSpec, SpecError, Stopping
from visioneval.shards import Shard

EVERY_FIELD = {
    "benchmark": "salbench", "options": {"data_dir": "/data", "configs": ["P3"]},
    "variants": ("blind", "jpeg:50"),
    "backend": BackendSpec(kind="openai", model="m", base_url="http://a/v1,http://b/v1",
                           api_key_env="MY_KEY"),
    "generation": GenerationSettings(temperature=0.5, max_tokens=77, seed=3),
    "engine": EngineOptions(concurrency=3, rpm=60, cache_path=Path("/c/r.sqlite3"),
                            price_in=1.0, price_out=2.0),
    "probe_resolution": True, "out": Path("/runs/x"), "shard": Shard(2, 4),
}


def test_a_spec_is_the_same_after_json():
    spec = RunSpec.make(**EVERY_FIELD)
    again = RunSpec.from_json(spec.to_json())
    assert again == spec and again.to_json() == spec.to_json()
    assert again.shard == Shard(2, 4) and again.backend.base_urls == ("http://a/v1",
                                                                       "http://b/v1")
    on_ray = RunSpec.make(benchmark="salbench", backend=BackendSpec(kind="builtin",
                                                                    model="majority"),
                          executor="ray", shards=8, ray_address="auto",
                          stopping=None, batch=False)
    assert RunSpec.from_json(on_ray.to_json()) == on_ray
    stopped = RunSpec.make(benchmark="salbench", backend=BackendSpec(kind="openai", model="m"),
                           stopping=Stopping(target_ci=5, min_samples=30))
    assert RunSpec.from_json(stopped.to_json()).stopping == Stopping(target_ci=5,
                                                                     min_samples=30)


def test_a_built_spec_equals_the_same_spec_read_back(synth_data):
    spec = RunSpec.make(benchmark="salbench", backend=BackendSpec(kind="builtin",
                                                                  model="majority"),
                        options={"data_dir": str(synth_data), "configs": ["P3"]})
    again = RunSpec.from_json(spec.to_json())
    assert spec.build().name == "salbench"  # one is built, the other not yet
    assert again == spec and hash(again) == hash(spec) and len({spec, again}) == 1
    assert again.given(out=Path("elsewhere")) != spec


def test_the_key_itself_is_never_in_a_spec(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-value")
    spec = RunSpec.make(**EVERY_FIELD)
    assert b"sk-secret-value" not in spec.to_json() and b"MY_KEY" in spec.to_json()


@pytest.mark.parametrize(("fields", "said"), [
    ({"batch": True, "stopping": Stopping(target_ci=5)}, "use one or the other"),
    ({"batch": True, "shard": Shard(1, 2)}, "--batch sends the run's batches from one process"),
    ({"stopping": Stopping(target_ci=5), "executor": "ray"}, "--target-ci stops one process"),
    ({"stopping": Stopping(target_ci=5), "shard": Shard(1, 2)}, "a shard holds part"),
    ({"executor": "ray", "engine": EngineOptions(max_cost=1.0)}, "--max-cost limits one"),
    ({"executor": "ray", "shard": Shard(1, 2)}, "drop --shard"),
    ({"shards": 3}, "--shards goes with --executor ray"),
    ({"executor": "ray", "shards": 5000}, "at most 4096"),
    ({"engine": EngineOptions(concurrency=5000)}, "at most 4096 requests in flight"),
    ({"probe_resolution": True, "backend": BackendSpec(kind="builtin", model="majority")},
     "no image transport"),
    ({"stopping": {"target_ci": 0}}, "--target-ci must be more than 0"),
    ({"executor": "everywhere"}, "executor: Input should be 'local' or 'ray'"),
])
def test_what_no_run_can_have_is_refused_in_one_line(fields, said):
    values = {"benchmark": "salbench", "backend": BackendSpec(kind="openai", model="m")}
    with pytest.raises(SpecError, match=said) as caught:
        RunSpec.make(**(values | fields))
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_a_finished_run_is_run_again_from_its_run_json(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    first = tmp_path / "first"
    assert invoke(*salbench_args(server, synth_data, first, "--configs", "P3,P3_box",
                                 "--no-report", "--temperature", "0.25")).exit_code == 0
    info = RunStore.open(first).info
    spec = RunSpec.from_run(info)
    assert (spec.benchmark, spec.backend.model, spec.generation.temperature) == \
        ("salbench", "m", 0.25)
    again = tmp_path / "again"
    result = invoke("run", "--spec", first / "run.json", "--out", again, "--no-cache",
                    "--base-url", server.base_url + "/v1", "--no-progress", "--no-report")
    assert result.exit_code == 0, result.stderr
    metrics = json.loads((again / "metrics.json").read_text())
    assert metrics == json.loads((first / "metrics.json").read_text())
    rerun = RunStore.open(again).info
    assert rerun.sessions[0].sent == info.sessions[0].sent > 0  # asked again, not cached
    assert RunSpec.from_run(rerun).model_dump(exclude={"engine"}) == \
        spec.model_dump(exclude={"engine"})


def test_a_spec_written_as_json_runs_like_the_command_line(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    spec = RunSpec.make(benchmark="salbench",
                        options={"data_dir": str(synth_data), "configs": ["P3"]},
                        backend=BackendSpec(kind="openai", model="m",
                                            base_url=server.base_url + "/v1"),
                        engine=EngineOptions(cache_path=None), out=tmp_path / "from-json")
    path = tmp_path / "spec.json"
    path.write_bytes(spec.to_json())
    by_flags = tmp_path / "by-flags"
    assert invoke(*salbench_args(server, synth_data, by_flags, "--configs", "P3", "--no-report",
                                 "--no-cache")).exit_code == 0
    result = invoke("run", "--spec", path, "--base-url", server.base_url + "/v1",
                    "--no-progress", "--no-report")
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "from-json" / "metrics.json").read_text()) == \
        json.loads((by_flags / "metrics.json").read_text())


def test_a_file_never_names_the_server_or_the_code_alone(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    first = tmp_path / "first"
    assert invoke(*salbench_args(server, synth_data, first, "--configs", "P3",
                                 "--no-report")).exit_code == 0
    result = invoke("run", "--spec", first / "run.json", "--out", tmp_path / "x",
                    "--no-progress")
    assert result.exit_code == 2 and "--base-url" in result.stderr
    assert not (tmp_path / "x").exists()
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"benchmark": "standout", "definition": "my_bench.py:Standout",
                               "backend": {"kind": "builtin", "model": "majority"}}))
    result = invoke("run", "--spec", own, "--no-progress")
    assert result.exit_code == 2
    assert "code of your own (my_bench.py:Standout)" in result.stderr.replace("\n", " ")


@pytest.mark.parametrize(("extra", "said"), [
    (("--model", "other"), "--model: the --spec file says what the run is"),
    (("--variant", "blind"), "--variant: the --spec file"),
    (("--option", "configs=P3"), "--option configs: the --spec file holds the options"),
])
def test_what_the_file_says_is_not_changed_by_flags(tmp_path, extra, said):
    spec = RunSpec.make(benchmark="salbench", backend=BackendSpec(kind="builtin",
                                                                  model="majority"))
    path = tmp_path / "spec.json"
    path.write_bytes(spec.to_json())
    result = invoke("run", "--spec", path, *extra)
    assert result.exit_code == 2 and said in result.stderr.replace("\n", " ")
    assert all(len(line) <= 100 for line in result.stderr.splitlines())


@pytest.mark.parametrize(("text", "said"), [
    ("{not json", "not valid JSON"),
    ('{"benchmark": "salbench"}', "backend: Field required"),
    ('{"benchmark": "salbench", "backend": {"kind": "builtin", "model": "majority"}, '
     '"colour": 1}', "colour: Extra inputs are not permitted"),
    ("[1, 2]", "not a run specification"),
])
def test_a_broken_spec_file_is_one_line_naming_it(tmp_path, text, said):
    path = tmp_path / "spec.json"
    path.write_text(text)
    result = invoke("run", "--spec", path)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1
    assert str(path.name) in lines[0] and said in lines[0]
