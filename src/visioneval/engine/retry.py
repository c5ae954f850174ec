"""Retries with a budget: capped exponential backoff with jitter, Retry-After honoured up to
the same cap.

A request whose budget is spent comes back as a Response with `error` set; it is stored
as an error and never scored as a wrong answer.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from dataclasses import dataclass

from visioneval.backends.base import (
    AuthError,
    Backend,
    BackendError,
    NotFound,
    TransientError,
)
from visioneval.core import defaults
from visioneval.core.records import Request, Response, stable_hash

log = logging.getLogger(__name__)

AUTH_STOP_AFTER = 3
"""Refused keys (HTTP 401/403) in a row, with no answer between them, that stop a run."""
NOT_FOUND_STOP_AFTER = 5
"""HTTP 404s in a row, with no answer between them, that stop a run: the URL is wrong (a
base URL without /v1), and every other sample would end in the same 404."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = defaults.MAX_ATTEMPTS
    timeout_s: float = defaults.TIMEOUT_S
    backoff_base_s: float = defaults.BACKOFF_BASE_S
    backoff_cap_s: float = defaults.BACKOFF_CAP_S

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Wait before the next attempt: the server's Retry-After when given, else half of
        the exponential step plus a random half (equal jitter); never more than the cap."""
        if retry_after is not None:
            return min(retry_after, self.backoff_cap_s)
        step = min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1))
        return step / 2 + random.uniform(0, step / 2)


class RetryWatch:
    """What a run's requests are doing, shared by all of them: retry waits (for the progress
    line), refused keys in a row (to stop the run), and whether -v traces each request.
    Touched only on retries and failures, plus one attribute per success."""

    def __init__(self) -> None:
        self.trace = log.isEnabledFor(logging.DEBUG)  # checked once, not per request
        self.auth_failures = 0
        self.auth_error: AuthError | None = None
        self.not_found = 0
        self.not_found_error: NotFound | None = None
        self.waiting = 0
        self.next_retry_at = 0.0  # time.monotonic() of the soonest retry while waiting
        self._waits: dict[int, float] = {}
        self._ids = 0
        self._said_capped = False

    @property
    def key_refused(self) -> bool:
        return self.auth_failures >= AUTH_STOP_AFTER

    @property
    def url_not_found(self) -> bool:
        return self.not_found >= NOT_FOUND_STOP_AFTER

    async def wait(self, seconds: float) -> None:
        self._ids += 1
        token = self._ids
        self._waits[token] = time.monotonic() + seconds
        self._changed()
        try:
            await asyncio.sleep(seconds)
        finally:
            del self._waits[token]
            self._changed()

    def _changed(self) -> None:
        # Two plain attributes: the progress bar's refresh thread reads them lock-free.
        self.next_retry_at = min(self._waits.values(), default=0.0)
        self.waiting = len(self._waits)

    def capped(self, asked: float, cap: float) -> None:
        if not self._said_capped:
            self._said_capped = True
            log.warning("the server asked to wait %.0f s before retrying (Retry-After); "
                        "waiting %g s (--backoff-cap) instead", asked, cap)


async def _attempt(backend: Backend, request: Request, timeout_s: float) -> Response:
    """One attempt. The timeout starts once the backend gave the request its slot (a
    connection, a rate-limit token): it measures the server, not the queue before it, so
    the N requests of one sample never time out waiting for each other."""
    async with backend.slot(request) as sender:
        try:
            async with asyncio.timeout(timeout_s):
                return await sender.complete(request)
        except TimeoutError:
            raise TransientError(f"no answer within {timeout_s:g} s") from None


MAX_REROUTES = 10
"""Attempts that failed on an endpoint taken out, sent again to another at no cost to the
retry budget; past this many a request counts its attempts as usual."""


async def generate(backend: Backend, request: Request, policy: RetryPolicy,
                   watch: RetryWatch | None = None) -> Response:
    """Send `request`, retrying transient failures within the budget; never raises
    BackendError. (A plain loop: tenacity cost ~0.1 ms of CPU per request in inspect calls.)"""
    watch = watch or RetryWatch()
    trace = watch.trace
    tag = stable_hash(request.fingerprint())[:8] if trace else ""
    start = time.perf_counter()
    attempt, reroutes = 0, 0
    while attempt < policy.max_attempts:
        attempt += 1
        if trace:
            log.debug("request %s attempt %d sent", tag, attempt)
        try:
            response = await _attempt(backend, request, policy.timeout_s)
        except TransientError as exc:
            if exc.reroute and reroutes < MAX_REROUTES:
                reroutes += 1
                attempt -= 1
                if trace:
                    log.debug("request %s failed on an endpoint taken out (%s); sent to "
                              "another", tag, exc)
                continue
            wait = policy.delay(attempt, exc.retry_after)
            if trace:
                log.debug("request %s attempt %d failed (%s) in %.3f s%s", tag, attempt, exc,
                          time.perf_counter() - start,
                          "" if attempt == policy.max_attempts else f"; next in {wait:.2f} s")
            if attempt == policy.max_attempts:
                return _failed(f"gave up after {attempt} attempt(s): {exc}", attempt, start)
            if exc.retry_after is not None and exc.retry_after > policy.backoff_cap_s:
                watch.capped(exc.retry_after, policy.backoff_cap_s)
            await watch.wait(wait)
        except BackendError as exc:
            if isinstance(exc, AuthError):
                watch.auth_failures += 1
                watch.auth_error = exc
            elif isinstance(exc, NotFound):
                watch.not_found += 1
                watch.not_found_error = exc
            if trace:
                log.debug("request %s attempt %d failed (%s) in %.3f s; not retried", tag,
                          attempt, exc, time.perf_counter() - start)
            return _failed(f"failed after {attempt} attempt(s): {exc}", attempt, start)
        else:
            watch.auth_failures = watch.not_found = 0
            latency = time.perf_counter() - start
            if trace:
                log.debug("request %s attempt %d ok (%s, %s tokens) in %.3f s", tag, attempt,
                          response.finish_reason, response.completion_tokens, latency)
            return response.model_copy(update={"attempts": attempt, "latency_s": latency})
    raise AssertionError("unreachable: max_attempts >= 1")


def _failed(message: str, attempts: int, start: float) -> Response:
    return Response(error=message, attempts=attempts, latency_s=time.perf_counter() - start)


_ATTEMPTS = re.compile(r"^(?:gave up|failed) after \d+ attempt\(s\): ")
_IDS = re.compile(r"[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*")
REASON_CHARS = 120


def error_reason(error: str) -> str:
    """An error message as a reason to count: without the attempt count, with ids and
    long numbers blanked (request ids would make every message unique), cut short."""
    reason = _ATTEMPTS.sub("", error)
    reason = _IDS.sub(lambda m: m[0] if len(m[0]) <= 5 else "#", reason)
    return reason[:REASON_CHARS] + ("..." if len(reason) > REASON_CHARS else "")
