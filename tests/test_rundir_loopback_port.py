"""`visioneval loopback` with a port it cannot use: one line and exit 2, no traceback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest


def _loopback(port: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "visioneval", "loopback", "--port", port],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("port", ["-1", *(pytest.param(p, marks=pytest.mark.slow)
                                          for p in ("65536", "70000"))])
def test_a_port_out_of_range_is_one_line(port):
    proc = _loopback(port)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: --port {port}: a port is a number from 0 to 65535 (0: any free port)"]


@pytest.mark.slow
def test_a_port_in_use_is_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _loopback(str(port))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(choose another --port, or 0 for any free port)"]
