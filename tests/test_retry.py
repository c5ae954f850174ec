"""The retry budget against real faults from the loopback server."""

from __future__ import annotations

import asyncio
import io
import time

import pytest

from visioneval.backends.openai import OpenAIBackend
from visioneval.core.records import GenerationSettings, Request, user
from visioneval.engine.retry import RetryPolicy, generate

PROMPT = "feature integration theory: Orientation, Color, Size. Which?"
FAST = RetryPolicy(max_attempts=6, timeout_s=2.0, backoff_base_s=0.01, backoff_cap_s=0.05)


def _generate(server, policy, n=1):
    async def go():
        async with OpenAIBackend("m", server.base_url + "/v1", api_key=None,
                                 api_key_env=None) as backend:
            req = Request((user(PROMPT),), GenerationSettings())
            return await asyncio.gather(*(generate(backend, req, policy) for _ in range(n)))

    return asyncio.run(go())


def test_transient_faults_are_retried_until_answered(serve):
    server = serve(fail_first=3, faults=("429", "500", "drop"), retry_after_s=None)
    [response] = _generate(server, FAST)
    assert response.ok and response.attempts == 4 and response.error is None


def test_spent_budget_is_an_error_not_an_answer(serve):
    server = serve(fail_first=10, faults=("500",))
    [response] = _generate(server, RetryPolicy(max_attempts=3, backoff_base_s=0.01))
    assert not response.ok and response.text is None
    assert response.attempts == 3
    assert response.error.startswith("gave up after 3 attempt(s): HTTP 500")


def test_permanent_error_is_not_retried(serve):
    server = serve(models=("other",))
    [response] = _generate(server, FAST)
    assert response.attempts == 1 and "failed after 1 attempt(s): HTTP 404" in response.error
    assert server.stats.requests == 1


@pytest.mark.slow
def test_retry_after_is_honoured(serve):
    server = serve(fail_first=1, faults=("429",), retry_after_s=0.4)
    start = time.perf_counter()
    [response] = _generate(server, RetryPolicy(backoff_base_s=0.0, backoff_cap_s=1.0))
    assert response.ok and response.attempts == 2
    assert time.perf_counter() - start >= 0.4


@pytest.mark.slow
def test_stalled_server_times_out_and_is_retried(serve):
    server = serve(fail_first=1, faults=("stall",))
    [response] = _generate(server, RetryPolicy(timeout_s=0.3, backoff_base_s=0.01))
    assert response.ok and response.attempts == 2


def test_backoff_is_capped_with_jitter():
    policy = RetryPolicy(backoff_base_s=1.0, backoff_cap_s=8.0)
    for attempt in range(1, 10):
        step = min(8.0, 2 ** (attempt - 1))
        delays = {policy.delay(attempt, None) for _ in range(50)}
        assert all(step / 2 <= d <= step for d in delays)
        assert len(delays) > 1  # jittered
    assert policy.delay(3, 7.0) == 7.0
    assert policy.delay(3, 1e9) == 8.0  # a server's Retry-After is capped by --backoff-cap


@pytest.mark.slow
def test_huge_retry_after_waits_the_cap_and_shows_on_the_progress_line(serve):
    from rich.console import Console

    from visioneval.engine.progress import RunProgress
    from visioneval.engine.retry import RetryWatch

    server = serve(fail_first=1, faults=("429",), retry_after_s=100000)
    policy = RetryPolicy(backoff_base_s=0.01, backoff_cap_s=0.6)
    watch = RetryWatch()
    progress = RunProgress(1, "x", console=Console(file=io.StringIO()), enabled=False)
    progress.watch_retries(watch)
    seen = []

    async def go():
        async with OpenAIBackend("m", server.base_url + "/v1", api_key=None,
                                 api_key_env=None) as backend:
            req = Request((user(PROMPT),), GenerationSettings())
            task = asyncio.create_task(generate(backend, req, policy, watch))
            while not task.done():
                seen.append(progress.waits_text())
                await asyncio.sleep(0.05)
            return task.result()

    start = time.perf_counter()
    response = asyncio.run(go())
    assert response.ok and response.attempts == 2
    assert time.perf_counter() - start < 5
    assert "1 waiting (retry in 1s)" in seen or "1 waiting (retry in 0s)" in seen, seen
    assert seen[-1] == "" or not watch.waiting
    assert progress.waits_text() == ""
