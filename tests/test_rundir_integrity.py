"""Run directory integrity: reading never writes, pages are replaced atomically, one process
per run directory, and an --out that is a file is one line."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

import pytest
from cli_helpers import invoke, journal, load, salbench_args, spawn

from visioneval.core.records import Record, Response
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.store import RunStore


def _record(i):
    return Record(id=f"P3/{i}", group="P3", target="color", response=Response(text="color"))


# -- item 4: reading the journal never writes ----------------------------------------------

def test_reading_a_torn_journal_leaves_it_byte_for_byte(tmp_path, caplog):
    store = RunStore.create(tmp_path / "run", RunInfo(
        benchmark="salbench", backend=BackendInfo(kind="builtin", model="random")))
    for i in range(3):
        store.append(_record(i))
    store.close()
    path = tmp_path / "run" / "samples.jsonl"
    path.write_bytes(path.read_bytes() + b'{"id": "P3/3", "gro')  # killed mid-write
    before = path.read_bytes()
    store = RunStore.open(tmp_path / "run")
    assert [r.id for r in store.records()] == ["P3/0", "P3/1", "P3/2"]
    assert path.read_bytes() == before
    torn = [m for m in caplog.messages if "incomplete last line" in m]
    assert len(torn) == 1 and "19 bytes" in torn[0]
    # Appending starts on a fresh line: the fragment stays a line of its own, ignored.
    store.append(_record(3))
    store.close()
    assert path.read_bytes().startswith(before + b"\n")
    assert [r.id for r in store.records()] == ["P3/0", "P3/1", "P3/2", "P3/3"]


def test_report_on_a_torn_journal_does_not_modify_it(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    assert invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                 "--no-report")).exit_code == 0
    path = out / "samples.jsonl"
    data = path.read_bytes()
    last = data[:-1].rfind(b"\n") + 1
    path.write_bytes(data[:last + 40])  # the last sample's write was cut short
    before = path.read_bytes()
    result = invoke("report", out, "--thumbnails", "0")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == before
    assert "incomplete last line" in result.stderr
    # The torn sample is re-run on resume; the journal keeps growing from a fresh line.
    result = invoke("salbench", "--resume", out, "--no-progress", "--no-report",
                    "--base-url", server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert path.read_bytes().startswith(before + b"\n")
    assert len(journal_records(out)) == 8


def journal_records(out):
    """The journal's parseable records (the torn fragment is its own, unparseable line)."""
    return [r for r in RunStore.open(out).records()]


# -- item 2: report.html is replaced atomically ----------------------------------------------

def _finished_run(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                   "--no-report"))
    assert result.exit_code == 0, result.output
    assert invoke("report", out, "--thumbnails", "0").exit_code == 0
    return out


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_the_old_report(serve, synth_data, tmp_path):
    """Deterministic: the child may write only half the page's size, so the kernel kills it
    (SIGXFSZ) in the middle of writing report.html."""
    out = _finished_run(serve, synth_data, tmp_path)
    page = out / "report.html"
    old = page.read_bytes()
    half = len(old) // 2

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (half, half))

    proc = subprocess.run([sys.executable, "-m", "visioneval", "report", str(out),
                           "--thumbnails", "0"], preexec_fn=limit, capture_output=True,
                          timeout=120)
    assert proc.returncode != 0  # it really died writing
    assert page.read_bytes() == old


@pytest.mark.slow
def test_sigkill_while_writing_the_report_never_leaves_a_partial_page(serve, synth_data,
                                                                     tmp_path):
    out = _finished_run(serve, synth_data, tmp_path)
    page = out / "report.html"
    old = page.read_bytes()
    stamp = page.stat().st_mtime_ns
    for _ in range(3):
        proc = spawn("report", out, "--thumbnails", "0")
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            writing = any(p.name != "report.html" and "report.html" in p.name
                          for p in out.iterdir())
            if writing or page.stat().st_mtime_ns != stamp or page.stat().st_size != len(old):
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        now = page.read_bytes()  # the old page, or a new one written whole
        assert now == old or (now.startswith(b"<!doctype html>") and now.endswith(b"</html>\n")
                              and abs(len(now) - len(old)) < 1000)
        stamp = page.stat().st_mtime_ns


@pytest.mark.slow
def test_layout_report_is_written_atomically(tmp_path):
    from cli_helpers import invoke

    from visioneval.canvas.synth import write_random
    from visioneval.report.page import write_report

    write_random(tmp_path / "canvas", 2, boxes=4, seed=1)
    run = tmp_path / "eval"
    assert invoke("layout", "--base-dir", tmp_path / "canvas", "--out", run, "--workers", "1",
                  "--no-progress", "--no-report").exit_code == 0
    target = run / "report.html"
    target.write_text("old page")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20, 20))

    code = ("import sys; from pathlib import Path; from visioneval.report.page import "
            "write_report; write_report(Path(sys.argv[1]))")
    proc = subprocess.run([sys.executable, "-c", code, str(run)], preexec_fn=limit,
                          capture_output=True, timeout=120)
    assert proc.returncode != 0
    assert target.read_text() == "old page"
    assert write_report(run) == target
    assert target.read_text().startswith("<!doctype html>")


# -- item 3: one process per run directory ------------------------------------------------------

def _wait_for(path, lines=1, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never reached {lines} lines")


@pytest.mark.slow
def test_two_resumes_at_once_one_refuses(serve, synth_data, tmp_path):
    server = serve(latency_s=0.5)
    out = tmp_path / "run"
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    args = salbench_args(server, synth_data, out, "--splits", "synthetic", "--concurrency", "2",
                         "--no-cache", "--no-report")
    first = spawn(*args, env=env)
    _wait_for(out / "samples.jsonl", 4)
    os.kill(first.pid, signal.SIGKILL)  # the OS releases its lock
    first.communicate()

    resume = ["salbench", "--resume", out, "--no-progress", "--no-cache", "--no-report",
              "--concurrency", "2", "--base-url", server.base_url + "/v1"]
    a = spawn(*resume, env=env)
    _wait_for(out / "samples.jsonl", 6)  # `a` holds the run directory and is sending
    b = spawn(*resume, env=env)
    _, b_err = b.communicate(timeout=60)
    assert b.returncode == 2, b_err
    lines = [ln for ln in b_err.splitlines() if ln.strip()]
    assert lines[-1] == f"error: {out} is in use by another visioneval process (pid {a.pid})"
    assert "Traceback" not in b_err
    a.communicate(timeout=120)
    assert a.returncode == 0

    records = journal(out)
    ids = [r["id"] for r in records]
    assert len(set(ids)) == 24
    assert load(out, "run.json")["counts"]["records"] == 24
    # Only the samples in flight at the kill were sent twice.
    assert len(ids) - 24 <= 2


@pytest.mark.slow
def test_a_new_run_takes_the_lock_too(serve, synth_data, tmp_path):
    server = serve(latency_s=0.5)
    out = tmp_path / "run"
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    first = spawn(*salbench_args(server, synth_data, out, "--configs", "P3", "--concurrency",
                                 "1", "--no-cache", "--no-report"), env=env)
    _wait_for(out / "samples.jsonl", 1)
    second = spawn("salbench", "--resume", out, "--no-progress", "--no-cache", "--base-url",
                   server.base_url + "/v1", env=env)
    _, err = second.communicate(timeout=60)
    first.communicate(timeout=120)
    assert second.returncode == 2 and "is in use by another visioneval process" in err
    assert first.returncode == 0
    assert len(journal(out)) == 8


# -- item 6: --out is a file -----------------------------------------------------------------

def test_out_pointing_at_a_file_is_one_line(serve, synth_data, tmp_path):
    server = serve()
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    result = invoke(*salbench_args(server, synth_data, target, "--configs", "P3"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: --out {target} is a file, not a directory"]
    assert target.read_text() == "mine"
    inside = invoke(*salbench_args(server, synth_data, target / "run", "--configs", "P3"))
    assert inside.exit_code == 2 and len(inside.stderr.strip().splitlines()) == 1
    assert "Traceback" not in inside.output
