"""`visioneval view` over a folder of runs (results/ by default): the runs index at `/`, each
run linking its sample browser, served in a subprocess and asked over HTTP, behind the same
Host check as one run's; and a run in progress listed as in use by its process, then as
interrupted once Ctrl-C stopped it."""

from __future__ import annotations

import http.client
import json
import re
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from cli_helpers import Viewing, invoke, salbench_args, spawn

from visioneval.report.runlist import entries


@pytest.fixture(scope="module")
def results(synth_data, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("home") / "results"
    for out in ("a", "suite/b"):
        result = invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                        synth_data, "--configs", "P3", "--out", root / out, "--no-progress",
                        "--no-report")
        assert result.exit_code == 0, result.output
    (root / "broken").mkdir()
    (root / "broken" / "run.json").write_text("{")
    return root


def _links(page: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)">', page)


def _get(url: str, path: str, host: str | None = None) -> tuple[int, str]:
    """(status, body) of GET url/path, with the Host header given (or the URL's own)."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    connection.request("GET", "/" + path, headers={"Host": host or where.netloc})
    answer = connection.getresponse()
    body = answer.read().decode()
    connection.close()
    return answer.status, body


@pytest.mark.slow
def test_view_serves_the_runs_and_each_runs_samples(results):
    viewing = Viewing(results)
    try:
        status, kind, body = viewing.get("")
        page = body.decode()
        assert (status, kind) == (200, "text/html")
        assert "Runs (3)" in page and "broken" in page and 'class="data sortable runs"' in page
        links = _links(page)
        assert len(links) == 2 and all(re.fullmatch(r"run/[0-9a-f]{12}/", ln) for ln in links)
        for link in links:
            status, kind, body = viewing.get(link)
            assert (status, kind) == (200, "text/html")
            assert '"server":"api/rows"' in body.decode()  # the browser asks this server
            assert '<a href="../../">all runs</a>' in body.decode()
            rows = json.loads(viewing.get(link + "api/rows?size=3")[2])
            assert rows["total"] == 8 and len(rows["rows"]) == 3
            sample = rows["rows"][0]["id"]
            status, kind, body = viewing.get(f"{link}api/record/{sample}")
            assert status == 200 and json.loads(body)["id"] == sample
            assert viewing.get(link.rstrip("/"))[0] == 200  # redirected to the page
        assert viewing.get("run/000000000000/")[0] == 404
        port = urlsplit(viewing.url).port
        for path in ("", links[0], links[0] + "api/rows?size=3"):
            assert _get(viewing.url, path)[0] == 200
            status, body = _get(viewing.url, path, host=f"evil.example:{port}")
            assert status == 403 and "<html" not in body
    finally:
        code, err = viewing.stop()
    assert code == 0, err


@pytest.mark.slow
def test_view_without_a_folder_serves_results_here(results):
    viewing = Viewing(cwd=results.parent)
    try:
        status, _, body = viewing.get("")
        assert status == 200 and "Runs (3)" in body.decode()
    finally:
        viewing.stop()
    # One run directory is served as before: its own page at /.
    viewing = Viewing(results / "a")
    try:
        status, _, body = viewing.get("")
        assert status == 200 and "Runs (" not in body.decode()
        assert json.loads(viewing.get("api/rows?size=2")[2])["total"] == 8
    finally:
        viewing.stop()


def test_view_of_no_results_folder_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("view", "--port", "0")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: no results/ folder here: name a run directory or a folder of runs"]


@pytest.mark.slow
def test_a_run_in_progress_is_in_use_then_interrupted(serve, synth_data, tmp_path):
    server = serve(latency_s=0.4)
    root = tmp_path / "results"
    run = root / "live"
    process = spawn(*salbench_args(server, synth_data, run, "--configs", "P3",
                                   "--concurrency", "1", "--no-report"))
    try:
        deadline = time.monotonic() + 60
        while not ((run / "samples.jsonl").exists() and (run / "samples.jsonl").stat().st_size):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        [entry] = entries(root)
        assert (entry.status.kind, entry.status.text) == ("running",
                                                          f"running (pid {process.pid})")
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    [entry] = entries(root)
    assert (entry.status.kind, entry.status.text) == ("interrupted", "interrupted")
    assert entry.headline is not None and 0 < (entry.n or 0) < 8


@pytest.mark.slow
def test_a_second_view_without_a_port_takes_the_next_free_one(results):
    """A view already holds 8766 (here: a socket of the test's, when the port is free):
    another view without --port serves on the next free port and says where."""
    import socket

    held = socket.socket()
    try:
        held.bind(("127.0.0.1", 8766))
        held.listen()
    except OSError:
        pass  # something holds it already: the same case
    try:
        viewing = Viewing(results, port=None)
        try:
            port = int(viewing.url.rsplit(":", 1)[1].rstrip("/"))
            assert 8766 < port <= 8775
            status, kind, _ = viewing.get("")
            assert status == 200 and kind == "text/html"
        finally:
            viewing.stop()
    finally:
        held.close()
