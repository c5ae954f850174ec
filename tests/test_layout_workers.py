"""`kill -9` of `visioneval layout` takes its worker processes with it (a real subprocess)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from visioneval.canvas.synth import write_random

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (name) "
        if int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """Running, not exited (an exited child not yet reaped by its new parent is a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


@pytest.mark.slow
def test_workers_exit_when_the_parent_is_killed(tmp_path):
    write_random(tmp_path / "canvas", 300, boxes=40, width=512, height=384)
    proc = subprocess.Popen(
        [sys.executable, "-m", "visioneval", "layout", "--base-dir", tmp_path / "canvas",
         "--out", tmp_path / "out.json", "--workers", "2", "--no-progress", "--skip-semantic"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            time.sleep(0.05)
        assert len(workers) == 2, "the pool never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in workers if _alive(pid)]
    finally:
        for pid in _children(proc.pid) | workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    assert left == [], f"workers {left} outlived their parent"


WATCHED_CHILD = """
import os, sys, threading, time
from visioneval.canvas.pipeline import _watch_parent
parent = os.getpid()  # before the fork: the parent may die before the child reads getppid
pid = os.fork()
if pid == 0:  # no prctl here: only the portable watch thread
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    time.sleep(60)
    os._exit(0)
print(pid, flush=True)
time.sleep(60)
"""


@pytest.mark.slow
def test_the_watch_thread_alone_ends_an_orphaned_worker():
    proc = subprocess.Popen([sys.executable, "-c", WATCHED_CHILD], stdout=subprocess.PIPE,
                            text=True)
    child = int(proc.stdout.readline())
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        proc.stdout.close()
