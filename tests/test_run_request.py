"""A run as one typed value: `visioneval.run_request(RunRequest(...))` runs what the
command line would, and a shard's request records its shard (against the loopback server)."""

from __future__ import annotations

import json

import pytest

import visioneval
from visioneval.backends.registry import BackendSpec
from visioneval.core import registry
from visioneval.core.records import GenerationSettings
from visioneval.runs.request import OnRay, RunRequest
from visioneval.shards import Shard


def _request(server, synth_data, out, shard=None, ray=None) -> RunRequest:
    benchmark = registry.build("salbench", {"data_dir": str(synth_data), "configs": ["P3"],
                                            "num_samples": 6})
    spec = BackendSpec(kind="openai", model="m", base_url=server.base_url + "/v1")
    return RunRequest(benchmark, spec, GenerationSettings(max_tokens=64), out=out,
                      shard=shard, ray=ray)


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
        visioneval.run_request(_request(server, synth_data, tmp_path / "x", ray=OnRay(2)))
    assert not (tmp_path / "x").exists()
