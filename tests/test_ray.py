"""`--executor ray` on a real local Ray (num_cpus=2) started by the tests: shards as Ray
tasks equal the plain run, a task killed mid-run is retried and resumes, layout's metrics
map over Ray with the same results file. Skipped, with the reason, when the `ray` extra is
not installed (CI installs it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, salbench_args, spawn

from visioneval.distributed.ray_runner import import_ray  # noqa: E402

try:
    ray = import_ray()  # turns off Ray's `uv run` hook before Ray reads it
except ValueError as missing:  # the extra is absent: say so, never skip silently
    pytest.skip(str(missing), allow_module_level=True)


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray with 2 CPUs for this module; commands join it with --ray-address. It
    takes about 5 s to start: the tests that use it are marked slow."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _salbench(server, data, out, *extra):
    return salbench_args(server, data, out, "--configs", "P3,P3_box", "--no-report", *extra)


@pytest.mark.slow
def test_three_shards_on_ray_equal_the_plain_run(ray_address, serve, synth_data, tmp_path):
    server = serve()
    whole = tmp_path / "whole"
    assert invoke(*_salbench(server, synth_data, whole)).exit_code == 0
    out = tmp_path / "ray"
    result = invoke(*_salbench(server, synth_data, out, "--executor", "ray", "--shards", "3",
                               "--ray-address", ray_address))
    assert result.exit_code == 0, result.output
    assert (out / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()
    assert sorted(p.name for p in (out / "shards").iterdir()) == ["1-of-3", "2-of-3", "3-of-3"]
    assert "merged 3 of 3 shards" in result.stderr
    # The same command again resumes the finished shards (nothing is sent) and merges again.
    sent = server.stats.answered
    again = invoke(*_salbench(server, synth_data, out, "--executor", "ray", "--shards", "3",
                              "--ray-address", ray_address))
    assert again.exit_code == 0 and server.stats.answered == sent
    assert (out / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()


def _running_pid(shard_dir: Path) -> int | None:
    """The pid of the worker running a shard, once it has journalled a few samples."""
    try:
        info = json.loads((shard_dir / "run.json").read_text())
        lines = (shard_dir / "samples.jsonl").read_bytes().count(b"\n")
    except (OSError, ValueError):
        return None
    session = (info.get("sessions") or [{}])[-1]
    if info.get("status") == "running" and lines >= 2 and "ended_at" not in session:
        return session.get("pid")
    return None


@pytest.mark.slow
def test_a_killed_task_is_retried_and_the_merge_is_still_exact(ray_address, serve,
                                                                synth_data, tmp_path):
    server = serve(latency_s=0.1)
    whole = tmp_path / "whole"
    assert invoke(*_salbench(server, synth_data, whole)).exit_code == 0
    out = tmp_path / "ray"
    proc = spawn(*_salbench(server, synth_data, out, "--executor", "ray", "--shards", "3",
                            "--ray-address", ray_address, "--concurrency", "1", "--no-cache"))
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        for shard_dir in sorted((out / "shards").glob("*-of-3")):
            pid = _running_pid(shard_dir)
            if pid:
                os.kill(pid, signal.SIGKILL)
                killed = shard_dir
                break
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=300)
    assert killed is not None, "no shard was seen running: " + stderr
    assert proc.returncode == 0, stderr
    sessions = json.loads((killed / "run.json").read_text())["sessions"]
    assert len(sessions) >= 2 and sessions[0]["status"] == "killed"
    assert sessions[-1]["resumed_from"] >= 2
    assert (out / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()


@pytest.mark.slow
def test_layout_metrics_on_ray_write_the_same_results(ray_address, tmp_path):
    """`visioneval layout --executor ray` is the generic Ray runner: shard tasks, then the
    merge, with the metrics and results file of the local run."""
    from visioneval.canvas.synth import write_random

    base = tmp_path / "canvas"
    write_random(base, 10, boxes=8, seed=2)
    common = ["layout", "--base-dir", base, "--embedder", "bow", "--no-progress"]
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert invoke(*common, "--workers", "2", "--out", local).exit_code == 0
    result = invoke(*common, "--workers", "2", "--out", on_ray, "--executor", "ray",
                    "--shards", "2", "--ray-address", ray_address)
    assert result.exit_code == 0, result.output
    assert "2 shards on Ray" in result.stderr

    def document(path):
        loaded = json.loads((path / "results.json").read_text())
        loaded.pop("seconds")
        return loaded

    assert document(on_ray) == document(local)
    assert (on_ray / "metrics.json").read_bytes() == (local / "metrics.json").read_bytes()


@pytest.mark.slow
def test_without_the_extra_the_error_names_it(tmp_path, synth_data):
    code = ("import sys; sys.modules['ray'] = None\n"
            "from visioneval.cli import main\n"
            f"sys.argv = ['visioneval', 'salbench', '--backend', 'builtin', '--model', "
            f"'popout', '--data-dir', {str(synth_data)!r}, '--configs', 'P3', '--out', "
            f"{str(tmp_path / 'x')!r}, '--executor', 'ray']\n"
            "main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "uv sync --extra ray" in proc.stderr and "visioneval[ray]" in proc.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_ctrl_c_stops_every_task_and_the_same_command_resumes(ray_address, serve,
                                                              synth_data, tmp_path):
    server = serve(latency_s=0.1)
    whole = tmp_path / "whole"
    assert invoke(*_salbench(server, synth_data, whole)).exit_code == 0
    out = tmp_path / "ray"
    args = _salbench(server, synth_data, out, "--executor", "ray", "--shards", "3",
                     "--ray-address", ray_address, "--concurrency", "1", "--no-cache")
    proc = spawn(*args)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not any(
            _running_pid(d) for d in (out / "shards").glob("*-of-3")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted: every shard stopped" in stderr and "--executor ray" in stderr
    said = flat(stderr)  # the resume, spelled as this command was started
    assert f"or: {sys.executable} -m visioneval salbench --resume {out} --base-url " in said
    assert f"--executor ray --ray-address {ray_address}" in said
    assert not (out / "metrics.json").exists()
    time.sleep(1.0)  # the cancelled workers are gone: their journals no longer grow
    sizes = {d.name: (d / "samples.jsonl").stat().st_size
             for d in (out / "shards").glob("*-of-3") if (d / "samples.jsonl").exists()}
    time.sleep(1.0)
    assert sizes == {d.name: (d / "samples.jsonl").stat().st_size
                     for d in (out / "shards").glob("*-of-3")
                     if (d / "samples.jsonl").exists()}
    resumed = invoke(*args)
    assert resumed.exit_code == 0, resumed.output
    assert (out / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()
