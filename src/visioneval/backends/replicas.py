"""Several endpoints serving one model, behind the one Backend interface.

Each endpoint (a Backend with its own connection pool) takes at most `concurrency` requests
at a time; a request goes to the live endpoint with the fewest outstanding. An endpoint that
cannot be reached, or fails `FAIL_AFTER` times in a row, is taken out: its failed requests
go to the others at no cost to their retry budget, and it is probed (its preflight) with a
growing pause until it answers, then put back. A request is only sent again after its
attempt failed, so no sample is answered twice. With every endpoint out, requests still go
to them and the retry budget decides, so a run never waits forever on dead servers.

The same dispatcher holds the model's limits: the AIMD concurrency limit (cut on HTTP 429)
over all endpoints, and the requests and tokens per minute. A request's slot is taken
before its attempt's timeout starts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from visioneval.backends.aimd import Aimd
from visioneval.backends.base import (
    Backend,
    BackendError,
    ConnectError,
    PreflightError,
    Sender,
    TransientError,
    Unreachable,
)
from visioneval.backends.ratelimit import RateLimiter
from visioneval.backends.served import served_text
from visioneval.core.records import Request, Response

log = logging.getLogger(__name__)

FAIL_AFTER = 3
"""Failures in a row (no answer between them) that take an endpoint out; one refused
connection is enough."""
PROBE_FIRST_S = 0.5
PROBE_CAP_S = 8.0
PROBE_TIMEOUT_S = 10.0


@dataclass
class EndpointCounter:
    """What one endpoint does in a session, counted as it goes; `recorded` is what run.json
    keeps of it (sessions[i].endpoints[url])."""

    requests: int = 0
    errors: int = 0
    answered: int = 0
    latency_s_total: float = 0.0
    taken_out: int = 0

    def recorded(self) -> dict[str, Any]:
        """run.json's `EndpointStats` of it (the backends import no run file: run.json's
        model imports the engine's options, which name the backends). Latency is the mean
        over answered attempts, from the moment the request was on the wire; None when
        nothing was answered (never 0)."""
        mean = round(self.latency_s_total / self.answered, 4) if self.answered else None
        return {"requests": self.requests, "errors": self.errors, "latency_s_mean": mean,
                "taken_out": self.taken_out}


@dataclass(eq=False)
class Endpoint:
    backend: Backend
    label: str
    outstanding: int = 0
    out: bool = False
    failures: int = 0
    probe_delay_s: float = PROBE_FIRST_S
    probe: asyncio.Task[None] | None = None
    stats: EndpointCounter = field(default_factory=EndpointCounter)


class Replicas(Backend):
    """One model on several endpoints (or one: the limits and slots still apply)."""

    def __init__(self, endpoints: Sequence[Backend], *, concurrency: int,
                 limiter: RateLimiter | None = None, cache_key_url: bool = False,
                 probe_first_s: float = PROBE_FIRST_S, probe_cap_s: float = PROBE_CAP_S):
        if not endpoints:
            raise ValueError("Replicas needs at least one endpoint")
        first = endpoints[0]
        super().__init__(first.model, first.base_url)
        self.name = first.name
        self.endpoints = [Endpoint(b, label) for b, label in zip(endpoints, _labels(endpoints),
                                                                  strict=True)]
        self.per_endpoint = concurrency
        self.limiter = limiter
        self.aimd = Aimd(concurrency * len(endpoints))
        self.in_flight = 0
        self.http_429 = 0
        self._live = len(self.endpoints)
        self._probe_first_s, self._probe_cap_s = probe_first_s, probe_cap_s
        self._waiters: deque[asyncio.Future[Endpoint]] = deque()
        self._cache_key_url = cache_key_url
        self._said_other_model: set[str] = set()
        self._identity: dict[str, Any] | None = None

    @property
    def capacity(self) -> int:
        """Requests that may be in flight when every endpoint is live."""
        return self.per_endpoint * len(self.endpoints)

    @property
    def endpoints_out(self) -> int:
        return len(self.endpoints) - self._live

    @property
    def concurrency_now(self) -> int:
        """The limit in force: the AIMD limit, at most the live endpoints' slots."""
        live = self._live or len(self.endpoints)
        return min(self.aimd.allowed, self.per_endpoint * live)

    def _make_identity(self) -> dict[str, Any]:
        """The model's identity: what the live endpoints say they serve, the same on every
        replica, so replicas share cached answers; the URL (the list of URLs) when they say
        nothing, or with --cache-key-url. Endpoints that serve different checkpoints under
        one name are not replicas: PreflightError."""
        live = [e for e in self.endpoints if not e.out] or self.endpoints
        served = {orjson.dumps(e.backend.served, option=orjson.OPT_SORT_KEYS):
                  e for e in live if e.backend.served}
        if len(served) > 1:
            said = "; ".join(f"{e.label} serves {served_text(e.backend.served or {})}"
                             for e in served.values())
            raise PreflightError(f"the URLs serve different models under '{self.model}' "
                                 f"({said}); give URLs of one model only")
        identity: dict[str, Any] = {"backend": self.name, "model": self.model}
        if served and all(e.backend.served for e in live):
            identity["served"] = live[0].backend.served
        if "served" not in identity or self._cache_key_url:
            urls = [e.backend.base_url for e in self.endpoints]
            identity["base_url"] = urls[0] if len(urls) == 1 else urls
        return identity

    def identity(self) -> dict[str, Any]:
        """Fixed at preflight (before it, from what is known so far)."""
        return self._identity if self._identity is not None else self._make_identity()

    async def preflight(self) -> None:
        """Every endpoint is checked; one that cannot be reached (while another can) starts
        out and is probed; any other problem stops the run, as for one server."""
        results = await asyncio.gather(*(e.backend.preflight() for e in self.endpoints),
                                       return_exceptions=True)
        failures = [(e, r) for e, r in zip(self.endpoints, results, strict=True)
                    if isinstance(r, BaseException)]
        for _, error in failures:
            if not isinstance(error, Unreachable) or len(failures) == len(self.endpoints):
                raise error
        for endpoint, error in failures:
            self._take_out(endpoint, str(error))
        self._identity = self._make_identity()

    async def complete(self, request: Request) -> Response:
        async with self.slot(request) as sender:
            return await sender.complete(request)

    def slot(self, request: Request) -> _Lease:
        return _Lease(self, request)

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            if endpoint.probe is not None:
                endpoint.probe.cancel()
        await asyncio.gather(*(e.backend.aclose() for e in self.endpoints))

    # Slots: at most `per_endpoint` per endpoint and `aimd.allowed` in all, first come first
    # served.

    def _pick(self) -> Endpoint | None:
        if self.in_flight >= self.aimd.allowed:
            return None
        any_live = self._live > 0
        best: Endpoint | None = None
        for endpoint in self.endpoints:
            if (endpoint.out and any_live) or endpoint.outstanding >= self.per_endpoint:
                continue
            if best is None or endpoint.outstanding < best.outstanding:
                best = endpoint
        return best

    async def _acquire(self) -> Endpoint:
        if not self._waiters and (endpoint := self._pick()) is not None:
            endpoint.outstanding += 1
            self.in_flight += 1
            return endpoint
        waiter: asyncio.Future[Endpoint] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # given a slot, then cancelled
                self._release(waiter.result())
            raise

    def _release(self, endpoint: Endpoint) -> None:
        endpoint.outstanding -= 1
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        waiters = self._waiters
        while waiters:
            if waiters[0].done():  # its task was cancelled
                waiters.popleft()
                continue
            endpoint = self._pick()
            if endpoint is None:
                return
            endpoint.outstanding += 1
            self.in_flight += 1
            waiters.popleft().set_result(endpoint)

    # Health: take out, probe, put back.

    def _finished(self, lease: _Lease, error: BaseException | None) -> None:
        endpoint = lease.endpoint
        stats = endpoint.stats
        if error is None:
            stats.answered += 1
            stats.latency_s_total += time.perf_counter() - lease.sent_at
            endpoint.failures = 0
            endpoint.probe_delay_s = self._probe_first_s
            if endpoint.out:
                self._put_back(endpoint)
            self.aimd.answered()
            if self.limiter is not None:
                self.limiter.settle(lease.charged, lease.response)
        elif isinstance(error, TransientError):
            stats.errors += 1
            if error.throttled:
                self.http_429 += 1
                if self.aimd.throttled(lease.sent_at):
                    log.info("HTTP 429: at most %d requests in flight from now on",
                             self.aimd.allowed)
            else:
                endpoint.failures += 1
                if isinstance(error, ConnectError) or endpoint.failures >= FAIL_AFTER:
                    self._take_out(endpoint, str(error))
                error.reroute = endpoint.out and self._live > 0
        elif isinstance(error, BackendError):
            stats.errors += 1  # the request's fault (bad request, refused key), not the server's
        self._release(endpoint)

    def _take_out(self, endpoint: Endpoint, why: str) -> None:
        if endpoint.out:
            return
        endpoint.out = True
        endpoint.stats.taken_out += 1
        self._live -= 1
        log.warning("endpoint %s taken out (%s); %d of %d left; probing it again in %.1f s",
                    endpoint.label, why, self._live, len(self.endpoints), endpoint.probe_delay_s)
        endpoint.probe = asyncio.get_running_loop().create_task(self._probe(endpoint))

    def _put_back(self, endpoint: Endpoint) -> None:
        if not endpoint.out:
            return
        endpoint.out = False
        endpoint.failures = 0
        self._live += 1
        log.warning("endpoint %s answers again; back in (%d of %d)", endpoint.label,
                    self._live, len(self.endpoints))
        self._wake()

    async def _probe(self, endpoint: Endpoint) -> None:
        """Ask the endpoint's preflight, pausing longer each time, until it answers."""
        delay = endpoint.probe_delay_s
        while endpoint.out:
            await asyncio.sleep(delay)
            delay = min(self._probe_cap_s, delay * 2)
            if not endpoint.out:
                break
            try:
                async with asyncio.timeout(PROBE_TIMEOUT_S):
                    await endpoint.backend.preflight()
            except Exception as exc:  # noqa: BLE001 - any failure means: not back yet
                log.debug("probe of %s failed: %s", endpoint.label, exc)
                continue
            if not self._serves_the_run_model(endpoint):
                continue
            self._put_back(endpoint)
        # Taken out again soon after: wait longer first (an answer resets it).
        endpoint.probe_delay_s = delay

    def _serves_the_run_model(self, endpoint: Endpoint) -> bool:
        """An endpoint back from the dead must serve what the run's other endpoints serve:
        one restarted with other weights under the same name stays out (said once)."""
        want = (self._identity or {}).get("served")
        if want is None or endpoint.backend.served == want:
            return True
        if endpoint.label not in self._said_other_model:
            self._said_other_model.add(endpoint.label)
            log.warning("endpoint %s answers again but now serves %s under '%s', not the "
                        "run's %s; left out", endpoint.label, endpoint.backend.served,
                        self.model, want)
        return False

    # What run.json and the progress line show.

    def endpoint_stats(self) -> dict[str, dict[str, Any]]:
        return {e.label: e.stats.recorded() for e in self.endpoints}

    def dispatch_stats(self) -> dict[str, Any]:
        """run.json's `DispatchStats`; the wait for --rpm/--tpm only when they were given."""
        stats: dict[str, Any] = {"concurrency_per_endpoint": self.per_endpoint,
                                 "concurrency_ceiling": self.aimd.ceiling,
                                 "concurrency_lowest": self.aimd.allowed_lowest,
                                 "concurrency_end": self.aimd.allowed, "http_429": self.http_429}
        if self.limiter is not None:
            stats["rate_limit_wait_s"] = round(self.limiter.stats.waited_s, 3)
        return stats


class _Lease:
    """One request's slot on an endpoint (and its rate-limit charge), held while it is sent.
    The dispatcher learns the outcome when the lease is left."""

    __slots__ = ("replicas", "request", "endpoint", "sent_at", "charged", "response")

    def __init__(self, replicas: Replicas, request: Request):
        self.replicas = replicas
        self.request = request
        self.charged = 0
        self.response: Response | None = None

    async def __aenter__(self) -> Sender:
        replicas = self.replicas
        self.endpoint = await replicas._acquire()
        if replicas.limiter is not None:
            try:
                self.charged = await replicas.limiter.take(self.request)
            except BaseException:
                replicas._release(self.endpoint)
                raise
        self.endpoint.stats.requests += 1
        self.sent_at = time.perf_counter()
        return self

    async def complete(self, request: Request) -> Response:
        self.response = await self.endpoint.backend.complete(request)
        return self.response

    async def __aexit__(self, exc_type: object, error: BaseException | None,
                        tb: object) -> None:
        if isinstance(error, asyncio.CancelledError):
            self.replicas._release(self.endpoint)
        else:
            self.replicas._finished(self, error)


def _labels(endpoints: Sequence[Backend]) -> list[str]:
    """Each endpoint's name in run.json: its URL without credentials, made unique."""
    labels: list[str] = []
    for backend in endpoints:
        label = backend.base_url or backend.name
        n = 2
        while label in labels:
            label = f"{backend.base_url or backend.name} #{n}"
            n += 1
        labels.append(label)
    return labels
