"""Several endpoints for one model: spread, one stopped mid-run and restarted, shared cache,
resume with several URLs. Real loopback servers on 127.0.0.1, the real command."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from cli_helpers import invoke, journal, load

from visioneval.loopback.server import ServerScript, ThreadedServer

N = 240  # samples: a few seconds at 6 in flight and 100 ms a request


@pytest.fixture(scope="module")
def many_rows(tmp_path_factory):
    from visioneval.benchmarks.salbench.synth import write_synthetic

    root = tmp_path_factory.mktemp("many")
    write_synthetic(root, N, seed=1)
    return root


@pytest.fixture
def three():
    """Three loopback servers for one model (100 ms an answer); the contexts are returned
    so a test can stop and restart one."""
    contexts = [ThreadedServer(ServerScript(latency_s=0.1)) for _ in range(3)]
    servers = [ctx.__enter__() for ctx in contexts]
    yield contexts, servers
    for ctx in contexts:
        ctx.__exit__(None, None, None)


def _args(urls, data, out, *extra):
    args = ["salbench", "--backend", "openai", "--model", "m", "--data-dir", data, "--out", out,
            "--configs", "P3", "--no-progress", "--no-report", "--backoff-base", "0.01",
            "--backoff-cap", "0.05"]
    for url in urls:
        args += ["--base-url", url + "/v1"]
    return [*args, *extra]


def _wait_until(condition, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.slow
def test_a_stopped_endpoint_loses_nothing_and_comes_back(three, many_rows, tmp_path):
    contexts, (a, b, c) = three
    moments: dict[str, int] = {}

    def stop_and_restart_b():
        # Stop b once it has taken a share; restart it once a and c took 30 more.
        if not _wait_until(lambda: b.stats.requests >= 15):
            return
        contexts[1].pause()
        others = a.stats.requests + c.stats.requests
        moments["b_at_stop"] = b.stats.requests
        _wait_until(lambda: a.stats.requests + c.stats.requests >= others + 30)
        moments["others_while_stopped"] = a.stats.requests + c.stats.requests - others
        moments["b_at_restart"] = b.stats.requests
        contexts[1].unpause()

    chaos = threading.Thread(target=stop_and_restart_b)
    chaos.start()
    out = tmp_path / "run"
    result = invoke(*_args([s.base_url for s in (a, b, c)], many_rows, out,
                           "--concurrency", "2", "--max-attempts", "3"))
    chaos.join(30)
    assert result.exit_code == 0, result.output
    assert "taken out" in result.stderr and "back in" in result.stderr

    records = journal(out)
    ids = Counter(r["id"] for r in records)
    assert len(ids) == N and max(ids.values()) == 1  # every sample once, none twice
    assert all(r["response"]["error"] is None for r in records)

    info = load(out, "run.json")
    assert info["counts"]["errors"] == 0 and info["counts"]["scored"] == N
    endpoints = info["sessions"][-1]["endpoints"]
    assert list(endpoints) == [s.base_url + "/v1" for s in (a, b, c)]
    # Answered attempts add up to the samples: none was answered twice.
    assert sum(e["requests"] - e["errors"] for e in endpoints.values()) == N
    assert endpoints[b.base_url + "/v1"]["taken_out"] >= 1
    assert endpoints[a.base_url + "/v1"]["taken_out"] == 0
    assert all(e["latency_s_mean"] >= 0.1 for e in endpoints.values())
    # While b was down, a and c carried on; once restarted, b had its share again.
    assert moments["others_while_stopped"] >= 30
    assert moments["b_at_restart"] == moments["b_at_stop"]
    assert b.stats.requests > moments["b_at_restart"]


@pytest.mark.slow
def test_the_load_goes_to_the_least_busy_and_the_cache_is_shared(three, synth_data,
                                                                   tmp_path):
    _, servers = three
    urls = [s.base_url for s in servers]
    first = invoke(*_args(urls, synth_data, tmp_path / "a", "--concurrency", "1"))
    assert first.exit_code == 0, first.output
    # 8 samples, one in flight per endpoint: the work is spread over all three.
    assert all(s.stats.requests >= 2 for s in servers)
    # A replica of the same model, alone at another URL: every answer comes from the cache.
    before = sum(s.stats.requests for s in servers)
    second = invoke(*_args(urls[2:], synth_data, tmp_path / "b"))
    assert second.exit_code == 0, second.output
    assert sum(s.stats.requests for s in servers) == before
    assert load(tmp_path / "b", "run.json")["counts"]["cache_hits"] == 8
    # --cache-key-url puts the URL back in the key: that URL asks again.
    third = invoke(*_args(urls[2:], synth_data, tmp_path / "c", "--cache-key-url"))
    assert third.exit_code == 0, third.output
    assert sum(s.stats.requests for s in servers) == before + 8


def test_a_comma_list_and_resume_with_the_recorded_urls(three, synth_data, tmp_path):
    _, servers = three
    out = tmp_path / "run"
    comma = ",".join(s.base_url + "/v1" for s in servers[:2])
    result = invoke("salbench", "--backend", "openai", "--model", "m", "--base-url", comma,
                    "--data-dir", synth_data, "--out", out, "--configs", "P3", "--no-progress",
                    "--no-report", "--num-samples", "4")
    assert result.exit_code == 0, result.output
    recorded = load(out, "run.json")["backend"]
    assert recorded["base_urls"] == [s.base_url + "/v1" for s in servers[:2]]
    assert recorded["base_url"] == servers[0].base_url + "/v1"
    # A URL that is not one of the run's servers is refused; the recorded ones are used.
    wrong = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                   servers[2].base_url + "/v1")
    assert wrong.exit_code == 2 and "does not match" in wrong.stderr
    # The run's servers are named again (a run directory alone names no server to trust).
    again = invoke("salbench", "--resume", out, "--no-progress", "--no-report",
                   "--base-url", comma)
    assert again.exit_code == 0, again.output
    assert list(load(out, "run.json")["sessions"][-1]["endpoints"]) == recorded["base_urls"]
