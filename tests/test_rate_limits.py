"""--rpm and --tpm hold over a few seconds; HTTP 429 cuts the concurrency, which grows back
slowly (AIMD). Real loopback servers; bounds are generous for a busy 2-core machine."""

from __future__ import annotations

import asyncio

import pytest
from cli_helpers import invoke, load

from visioneval.backends.openai import OpenAIBackend
from visioneval.backends.ratelimit import RateLimiter, estimate_tokens, image_tokens
from visioneval.backends.replicas import Replicas
from visioneval.core.records import GenerationSettings, Request, user
from visioneval.engine.progress import RunProgress
from visioneval.engine.retry import RetryPolicy, generate


def _salbench(server, data, out, *extra):
    return ["salbench", "--backend", "openai", "--model", "m", "--base-url",
            server.base_url + "/v1", "--data-dir", data, "--out", out, "--configs", "P3",
            "--no-progress", "--no-report", "--no-cache", *extra]


def _rate(times: list[float]) -> float:
    """Requests per second between the first arrival and the last."""
    return (len(times) - 1) / (times[-1] - times[0])


@pytest.mark.slow
def test_rpm_holds(serve, synth_data, tmp_path):
    server = serve()
    server.stats.keep_arrivals = True
    # 8 samples at 240 a minute (4 a second) with 8 in flight: ~1.75 s, paced.
    result = invoke(*_salbench(server, synth_data, tmp_path / "run", "--rpm", "240",
                               "--concurrency", "8"))
    assert result.exit_code == 0, result.output
    times = server.stats.arrivals
    assert len(times) == 8
    assert 0.7 * 4 <= _rate(times) <= 1.1 * 4
    # Nowhere faster: no two requests closer than the pace allows (a little jitter aside).
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.8 * 0.25
    assert load(tmp_path / "run", "run.json")["sessions"][-1]["dispatch"][
        "rate_limit_wait_s"] > 1.0


@pytest.mark.slow
def test_tpm_holds_after_correcting_by_the_reported_usage(serve, synth_data, tmp_path):
    server = serve()
    server.stats.keep_arrivals = True
    # The estimate charges max_tokens (64) and the 384 px image (255) up front; the server
    # reports far fewer, and the refund lets the run go at the limit, not below it.
    tpm = 30000  # 500 tokens a second: 8 samples of ~150 tokens in ~2.5 s
    result = invoke(*_salbench(server, synth_data, tmp_path / "run", "--tpm", str(tpm),
                               "--max-tokens", "64"))
    assert result.exit_code == 0, result.output
    counts = load(tmp_path / "run", "run.json")["counts"]
    used = counts["prompt_tokens"] + counts["completion_tokens"]
    times = server.stats.arrivals
    per_request = used / len(times)
    assert per_request < 0.5 * (255 + 64)  # the estimate was well above the real cost
    tokens_per_s = per_request * _rate(times)
    assert 0.6 * tpm / 60 <= tokens_per_s <= 1.1 * tpm / 60


def test_aimd_cuts_on_429_and_grows_back(serve, synth_data, tmp_path):
    # The server takes 3 requests at a time and answers 429 beyond; the client starts at 12.
    server = serve(max_in_flight=3, latency_s=0.05, retry_after_s=None)
    out = tmp_path / "run"
    result = invoke(*_salbench(server, synth_data, out, "--concurrency", "12",
                               "--backoff-base", "0.02", "--backoff-cap", "0.1"))
    assert result.exit_code == 0, result.output
    session = load(out, "run.json")["sessions"][-1]
    dispatch = session["dispatch"]
    assert dispatch["concurrency_ceiling"] == 12
    assert dispatch["concurrency_lowest"] <= 6  # cut at least once by half
    assert dispatch["http_429"] == server.stats.over_limit > 0
    assert session["errors"] == 0


@pytest.mark.slow
def test_aimd_limits_a_storm_of_429s(serve):
    """The same server, more samples, at the engine level: once cut, the limit hovers near
    the server's 3 and most requests are answered at the first attempt."""
    server = serve(max_in_flight=3, latency_s=0.02, retry_after_s=None)
    policy = RetryPolicy(max_attempts=20, timeout_s=5, backoff_base_s=0.01, backoff_cap_s=0.05)

    async def go():
        endpoint = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)
        async with Replicas([endpoint], concurrency=16) as replicas:
            progress = RunProgress(None, "t", enabled=False)
            progress.watch_dispatch(replicas)
            requests = [Request((user(f"q {i}: Orientation, Color, Size?"),),
                                GenerationSettings()) for i in range(150)]
            responses = await asyncio.gather(*(generate(replicas, r, policy)
                                               for r in requests))
            return replicas, responses, progress.dispatch_text()

    replicas, responses, text = asyncio.run(go())
    assert all(r.ok for r in responses)
    assert replicas.http_429 == server.stats.over_limit
    # 16 workers against 3 slots with no AIMD: ~4 refusals per answer; with it, far fewer.
    assert replicas.http_429 < 150
    assert replicas.aimd.allowed_lowest <= 4
    assert f"{replicas.http_429} x 429" in text and "in flight" in text


def test_token_estimate_counts_text_images_and_max_tokens():
    from helpers import make_image

    assert image_tokens(512, 512) == 85 + 170
    assert image_tokens(1024, 1024) == 85 + 170 * 4  # scaled to 768: 2 x 2 tiles
    assert image_tokens(4096, 1024) == 85 + 170 * 4  # fitted in 2048: 2048 x 512, 4 tiles
    request = Request((user("x" * 400, make_image(size=(16, 12))),),
                      GenerationSettings(max_tokens=100))
    assert estimate_tokens(request) == 100 + 255 + 100


@pytest.mark.slow
def test_a_request_bigger_than_the_budget_still_goes_and_pays_in_debt():
    async def go():
        limiter = RateLimiter(tpm=600)  # 10 a second
        big = Request((user("x" * 40),), GenerationSettings(max_tokens=10))  # 20 tokens
        await limiter.take(big)  # at once: the bucket was not in debt
        assert limiter.tokens is not None and limiter.tokens.level < -19
        await limiter.take(big)  # waits ~2 s for the debt to be paid
        return limiter.stats.waited_s

    assert 1.5 <= asyncio.run(go()) <= 3.0


def test_aimd_grows_back_once_the_429s_stop(serve):
    # The first 20 requests are refused (429), then every request is answered.
    server = serve(fail_first=20, faults=("429",), retry_after_s=None)
    policy = RetryPolicy(max_attempts=20, timeout_s=5, backoff_base_s=0.01, backoff_cap_s=0.05)

    async def go():
        endpoint = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None)
        async with Replicas([endpoint], concurrency=8) as replicas:
            requests = [Request((user(f"q {i}: Orientation, Color, Size?"),),
                                GenerationSettings()) for i in range(120)]
            responses = await asyncio.gather(*(generate(replicas, r, policy)
                                               for r in requests))
            return replicas, responses

    replicas, responses = asyncio.run(go())
    assert all(r.ok for r in responses)
    assert replicas.http_429 == 20
    assert replicas.aimd.allowed_lowest <= 4  # cut
    assert replicas.aimd.allowed == 8  # and grown back: one per round of answers
