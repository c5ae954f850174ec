"""Numbers that must not be silently wrong: what --max-cost says was spent, records of
samples that are not in the data, and a full disk. Real loopback runs, a real tmpfs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args

from visioneval.core.store import RunStore
from visioneval.cost.money import usd


@pytest.mark.slow
def test_max_cost_line_counts_the_answers_in_flight(serve, synth_data, tmp_path):
    # Four requests in flight, 0.2 s each: when the limit is reached, three more are out.
    server = serve(latency_s=0.2)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                   "--price-in", "1000", "--price-out", "1000", "--max-cost",
                                   "0.5", "--concurrency", "4", "--no-cache"))
    assert result.exit_code == 3, result.output
    info = load(out, "run.json")
    session = info["sessions"][-1]
    answers = len(journal(out))
    assert answers == session["sent"] == server.stats.requests
    assert answers > 4  # more than the wave that crossed the limit: the line must count all
    said = f"{usd(session['spent_usd'])} spent this session ({answers} answers)"
    assert said in flat(result.stderr), result.stderr
    assert info["counts"]["cost"]["usd"] == pytest.approx(session["spent_usd"], abs=1e-12)
    # Within one wave: the spend before the last four answers was under the limit.
    per_answer = session["spent_usd"] / answers
    assert session["spent_usd"] - 4 * per_answer < 0.5


def test_a_journal_record_of_a_sample_not_in_the_data_is_named_and_left_out(
        serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    args = salbench_args(server, synth_data, out, "--configs", "P3", "--no-report")
    assert invoke(*args).exit_code == 0
    before = load(out)
    records = journal(out)
    assert len(records) == 8
    stranger = dict(records[0], id="P3/not-in-the-data")
    with open(out / "samples.jsonl", "a") as fh:
        fh.write(json.dumps(stranger) + "\n")
    resumed = invoke("salbench", "--resume", out, "--no-progress", "--no-report",
                     "--base-url", server.base_url + "/v1")
    assert resumed.exit_code == 0, resumed.output
    assert "holds a record of sample 'P3/not-in-the-data', which is not in this run's data" \
        in flat(resumed.stderr)
    assert "8 samples recorded" in resumed.stdout
    assert load(out) == before  # the metrics as if the line were not there
    info = load(out, "run.json")
    assert info["not_in_data"] == ["P3/not-in-the-data"]
    assert info["counts"]["records"] == 8 and info["counts"]["not_in_data"] == 1
    # Readers of the run leave it out too (the report's sample browser, compare).
    from visioneval.core.rundir import load as load_view

    assert len(list(load_view(out).iter_records())) == 8


def _tmpfs_runner() -> list[str] | None:
    """A command prefix that runs a shell script with a small tmpfs mounted at $1: in a
    private mount namespace (no root needed where user namespaces are allowed); None when
    this machine allows neither."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run([unshare, "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs /tmp && echo ok"],
                           capture_output=True, text=True, timeout=30)
    return [unshare, "--map-root-user", "--mount"] if probe.stdout.strip() == "ok" else None


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_loses_nothing(serve, synth_data, tmp_path):
    runner = _tmpfs_runner()
    if runner is None:
        pytest.skip("this machine cannot mount a small tmpfs (no unshare, or user and mount "
                    "namespaces are not allowed), which is how this test fills a disk")
    server = serve()
    mount, kept = tmp_path / "small", tmp_path / "kept"
    mount.mkdir()
    out = mount / "run"
    args = [sys.executable, "-m", "visioneval", *map(str, salbench_args(
        server, synth_data, out, "--splits", "synthetic", "--no-report", "--cache-dir",
        tmp_path / "cache"))]
    # 12 KB hold run.json and a few journal lines, not 24; the run dir is copied out before
    # the namespace (and its tmpfs) goes away.
    script = ('mount -t tmpfs -o size=12k tmpfs "$1" && shift && "$@"; echo "exit=$?"; '
              f'cp -a {out} {kept}')
    done = subprocess.run([*runner, "sh", "-c", script, "sh", str(mount), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert "exit=2" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "No space left on device" in errors[0] and "MB free on" in errors[0]
    assert "samples.jsonl" in errors[0] or "run.json" in errors[0]
    # Spelled as the run was started (python -m), so it works when pasted.
    assert f"free some space, then continue with: {sys.executable} -m visioneval salbench " \
        "--resume" in flat(done.stderr)
    # Nothing recorded is lost: the journal's complete lines are records; a resume with room
    # finishes the run, each sample once.
    written = [ln for ln in (kept / "samples.jsonl").read_bytes().split(b"\n")
               if ln.endswith(b"}")]
    assert 0 < len(written) < 24
    resumed = invoke("salbench", "--resume", kept, "--no-progress", "--no-report",
                     "--base-url", server.base_url + "/v1", "--cache-dir", tmp_path / "cache")
    assert resumed.exit_code == 0, resumed.output
    latest = RunStore.open(kept).latest_records()  # a torn last line is set aside
    assert len(latest) == 24 and all(r.ok for r in latest)


@pytest.mark.slow
def test_a_full_cache_disk_turns_the_cache_off_and_the_run_goes_on(serve, synth_data,
                                                                   tmp_path):
    runner = _tmpfs_runner()
    if runner is None:
        pytest.skip("this machine cannot mount a small tmpfs (no unshare, or user and mount "
                    "namespaces are not allowed), which is how this test fills a disk")
    server = serve()
    cache = tmp_path / "cache"
    cache.mkdir()
    out = tmp_path / "run"
    args = [sys.executable, "-m", "visioneval", *map(str, salbench_args(
        server, synth_data, out, "--splits", "synthetic", "--no-report", "--cache-dir",
        cache))]
    for size in ("8k", "48k"):  # too small to open the cache; room for a few answers
        shutil.rmtree(out, ignore_errors=True)
        script = f'mount -t tmpfs -o size={size} tmpfs "$1" && shift && "$@"; echo "exit=$?"'
        done = subprocess.run([*runner, "sh", "-c", script, "sh", str(cache), *args],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")})
        assert "Traceback" not in done.stderr, done.stderr
        assert "exit=0" in done.stdout, done.stderr
        warned = [ln for ln in done.stderr.splitlines() if "response cache" in ln]
        assert len(warned) == 1 and "caching is off" in warned[0], done.stderr
        assert "MB free on" in warned[0]
        assert len({r["id"] for r in journal(out)}) == 24
