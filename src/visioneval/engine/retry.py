"""Retries with a budget: capped exponential backoff with jitter, Retry-After honoured.

A request whose budget is spent comes back as a Response with `error` set; it is stored
as an error and never scored as a wrong answer.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from visioneval.backends.base import Backend, BackendError, TransientError
from visioneval.records import Request, Response


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    timeout_s: float = 120.0
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 30.0
    retry_after_cap_s: float = 300.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Wait before the next attempt: the server's Retry-After when given (capped),
        else half of the capped exponential step plus a random half (equal jitter)."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_cap_s)
        step = min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1))
        return step / 2 + random.uniform(0, step / 2)


async def _attempt(backend: Backend, request: Request, timeout_s: float) -> Response:
    try:
        async with asyncio.timeout(timeout_s):
            return await backend.complete(request)
    except TimeoutError:
        raise TransientError(f"no answer within {timeout_s:g} s") from None


async def generate(backend: Backend, request: Request, policy: RetryPolicy) -> Response:
    """Send `request`, retrying transient failures; never raises BackendError."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return policy.delay(state.attempt_number, getattr(exc, "retry_after", None))

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_exception_type(TransientError),
        reraise=True,
    )
    start = time.perf_counter()
    attempts = 0
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                response = await _attempt(backend, request, policy.timeout_s)
    except BackendError as exc:
        kind = "gave up" if isinstance(exc, TransientError) else "failed"
        return Response(error=f"{kind} after {attempts} attempt(s): {exc}",
                        attempts=attempts, latency_s=time.perf_counter() - start)
    return response.model_copy(update={"attempts": attempts,
                                       "latency_s": time.perf_counter() - start})
