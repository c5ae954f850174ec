"""CPU per request of the engine's send path, with and without the replica dispatcher and
the rate limiter, against a backend that answers at once (no network: only our own code).

    uv run python measure/dispatch_overhead.py

Prints microseconds of CPU per request for `retry.generate` over: the bare backend, a
`Replicas` of 1 and of 4 endpoints, and a `Replicas` with --rpm/--tpm set so high that
nothing waits (the limiter's bookkeeping alone). docs/PERFORMANCE.md records the figures.
"""

from __future__ import annotations

import asyncio
import time

from visioneval.backends.base import Backend
from visioneval.backends.ratelimit import RateLimiter
from visioneval.backends.replicas import Replicas
from visioneval.core.records import GenerationSettings, Request, Response, user
from visioneval.engine.retry import RetryPolicy, generate

N = 100_000
IN_FLIGHT = 64


class Instant(Backend):
    """Answers every request at once with usage, as a server would report it."""

    name = "instant"

    async def complete(self, request: Request) -> Response:
        return Response(text="Color", prompt_tokens=20, completion_tokens=1)


async def _drive(backend: Backend) -> float:
    policy = RetryPolicy()
    request = Request((user("Which: Orientation, Color, Size?"),), GenerationSettings())
    left = N

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await generate(backend, request, policy)

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return (time.process_time() - started) / N * 1e6


def main() -> None:
    cases = {
        "bare backend": lambda: Instant("m"),
        "Replicas, 1 endpoint": lambda: Replicas([Instant("m")], concurrency=IN_FLIGHT),
        "Replicas, 4 endpoints": lambda: Replicas([Instant("m") for _ in range(4)],
                                                  concurrency=IN_FLIGHT // 4),
        "Replicas, 1 endpoint, --rpm and --tpm": lambda: Replicas(
            [Instant("m")], concurrency=IN_FLIGHT,
            limiter=RateLimiter(rpm=10**12, tpm=10**15)),
    }
    print("| send path | CPU µs per request |")
    print("|---|---:|")
    for name, make in cases.items():
        runs = sorted(asyncio.run(_drive(make())) for _ in range(3))
        print(f"| {name} | {runs[1]:.1f} |")


if __name__ == "__main__":
    main()
