"""CPU per request of the HTTP backend's send and read path against a loopback server process
that answers at once, for a short answer and a 60 KB one: `OpenAIBackend.complete` as it
is (no redirect followed, the body streamed under the 32 MiB cap, gzip and deflate decoded
by `wire`) against the same backend reading as it did before (`resp.read()`, aiohttp's
own decoding, redirects followed), in alternating bursts, so both see the same machine.

    uv run python measure/http_reply_cost.py

Only this process's CPU is counted (the server runs in its own process), over ROUNDS bursts
of N requests each with 32 in flight, after a warm-up; the least and the median burst are
shown (the least is the code's own cost; the others add what other processes on the cores
took from the caches). docs/PERFORMANCE.md records the figures.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson

from visioneval.backends import body
from visioneval.backends.base import ConnectError, TransientError
from visioneval.backends.openai import OpenAIBackend
from visioneval.core.records import GenerationSettings, Request, user

N = 3000
IN_FLIGHT = 32
ROUNDS = 10
ANSWERS = {"short answer": "Color", "60 KB answer": "x" * 60_000}
REQUEST = Request((user("Which: Orientation, Color, Size?"),), GenerationSettings())


class ReadAll(OpenAIBackend):
    """The read before the cap: aiohttp decodes, follows redirects, reads the body whole."""

    def _session_or_new(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._connections, ttl_dns_cache=300),
                headers={"Content-Type": "application/json", **self.auth_headers()},
                timeout=aiohttp.ClientTimeout(total=None),
                json_serialize=lambda obj: orjson.dumps(obj).decode())
        return self._session

    async def post_json(self, path: str, payload: dict[str, Any]) -> Any:
        data = body.dumps(payload)
        del payload
        try:
            async with self._session_or_new().post(self.url(path), data=data) as resp:
                raw = await resp.read()
                status, headers = resp.status, resp.headers
        except aiohttp.ClientConnectorError as exc:
            raise ConnectError(f"cannot connect: {exc.os_error}") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise TransientError(f"connection failed: {exc!r}") from None
        return self._decode(status, headers, raw)


def start_server(answer: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "visioneval", "loopback", "--port", "0",
                             "--model", "m", "--answer", f"fixed:{answer}"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline())
    assert url, "the loopback server did not say its URL"
    return proc, url.group(0)


async def burst(send: Callable[[], Awaitable[object]], n: int) -> float:
    """CPU µs per request for n requests, IN_FLIGHT at a time."""
    left = n

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await send()

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return (time.process_time() - started) / n * 1e6


async def compare(url: str) -> dict[str, list[float]]:
    backends = {"capped (now)": OpenAIBackend, "resp.read() (before)": ReadAll}
    made = {name: cls("m", url + "/v1", api_key=None, api_key_env=None,
                      connections=IN_FLIGHT) for name, cls in backends.items()}
    rounds: dict[str, list[float]] = {name: [] for name in made}
    try:
        for backend in made.values():  # connections open, code warm
            await burst(lambda b=backend: b.complete(REQUEST), 500)
        for _ in range(ROUNDS):
            for name, backend in made.items():
                rounds[name].append(await burst(lambda b=backend: b.complete(REQUEST), N))
    finally:
        for backend in made.values():
            await backend.aclose()
    return rounds


def main() -> None:
    print("| reply | read | CPU µs per request, least burst | median burst |")
    print("|---|---|---:|---:|")
    for name, answer in ANSWERS.items():
        server, url = start_server(answer)
        try:
            for read, rounds in asyncio.run(compare(url)).items():
                print(f"| {name} | {read} | {min(rounds):.1f} | "
                      f"{statistics.median(rounds):.1f} |")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
