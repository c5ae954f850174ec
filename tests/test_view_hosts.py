"""`visioneval view` answers only requests addressed to itself (a DNS-rebinding page sends
its own name as Host and gets 403), and a port it cannot use is one line and exit 2."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import aiohttp
import pytest
from cli_helpers import invoke

from visioneval.io.local_server import listen
from visioneval.report.synthrun import write_run
from visioneval.report.viewer import Viewer, serve


@pytest.fixture(scope="module")
def run(synth_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("view") / "run"
    return write_run(out, "salbench", {"configs": ["P3"], "data_dir": str(synth_data)}, 12)


async def _raw(port: int, request: bytes) -> bytes:
    """One request written byte for byte (Host as given, or none), the whole answer back."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def _with_viewer(run: Path, check) -> None:
    viewer = Viewer.open(run)
    sock = listen(0)
    urls: list[str] = []
    task = asyncio.create_task(serve(viewer, sock, urls.append))
    try:
        while not urls:
            await asyncio.sleep(0.01)
        await check(sock.getsockname()[1])
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        sock.close()


def test_only_requests_naming_the_server_are_answered(run):
    sample_id = Viewer.open(run).index.read(0).id
    got: dict[tuple[str, str], tuple[int, str]] = {}

    async def check(port: int) -> None:
        hosts = {"loopback": f"127.0.0.1:{port}", "localhost": f"localhost:{port}",
                 "upper": f"LOCALHOST:{port}", "v6": f"[::1]:{port}",
                 "evil": f"evil.example:{port}", "evil no port": "evil.example",
                 "loopback no port": "127.0.0.1", "other port": f"127.0.0.1:{port + 1}",
                 "suffix": f"localhost.evil.example:{port}"}
        async with aiohttp.ClientSession() as session:
            for name, host in hosts.items():
                for path in ("", "api/rows?size=5", f"api/record/{sample_id}"):
                    async with session.get(f"http://127.0.0.1:{port}/{path}",
                                           headers={"Host": host}) as r:
                        got[(name, path)] = (r.status, await r.text())
        got[("none", "")] = (0, (await _raw(port, b"GET / HTTP/1.0\r\n\r\n")).decode())
        forged = f"GET /api/rows HTTP/1.1\r\nHost: rebound.example:{port}\r\n" \
                 "Connection: close\r\n\r\n"
        got[("raw forged", "")] = (0, (await _raw(port, forged.encode())).decode())

    asyncio.run(_with_viewer(run, check))
    for host in ("loopback", "localhost", "upper", "v6"):
        assert got[(host, "")][0] == 200 and "<html" in got[(host, "")][1]
        assert got[(host, "api/rows?size=5")][0] == 200
        assert sample_id in got[(host, f"api/record/{sample_id}")][1]
    for host in ("evil", "evil no port", "loopback no port", "other port", "suffix"):
        for path in ("", "api/rows?size=5", f"api/record/{sample_id}"):
            status, body = got[(host, path)]
            assert status == 403, (host, path)
            assert sample_id not in body and "<html" not in body
    for key in (("none", ""), ("raw forged", "")):
        head, _, body = got[key][1].partition("\r\n\r\n")
        assert head.startswith("HTTP/1.") and " 403 " in head.splitlines()[0]
        assert sample_id not in body


def test_a_port_in_use_is_one_line_and_exit_2(run):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke("view", run, "--port", str(port))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: address already in use (choose another "
        "--port, or 0 for any free port)"]
    assert result.stdout == ""  # refused before indexing the run


@pytest.mark.parametrize("port", ["70000", "65536", "-1"])
def test_a_port_out_of_range_is_one_line_and_exit_2(run, port):
    result = invoke("view", run, "--port", port)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: --port {port}: a port is a number from 0 to 65535 (0: any free port)"]


def test_the_port_option_says_its_range():
    result = invoke("view", "--help")
    assert "0-65535" in result.stdout
