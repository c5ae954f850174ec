"""Client-side rate limits: requests and tokens per minute, as token buckets.

A hosted API counts requests and tokens per minute and answers 429 past its limit; sending
at the limit from the start costs no retries. Each bucket refills at `per_minute / 60` a
second and saves nothing up while idle (its level is at most 0): a request may go while the
bucket is not in debt and takes its whole cost, into debt if need be. So requests are paced
evenly, never in a burst, a request of any size can go, and the long-run rate is exact.

Tokens are not known before the answer, so a request is charged an estimate (its text, its
images and its `max_tokens`, see `estimate_tokens`) and the bucket is corrected by the
usage the server reports once it answers.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass

from visioneval.core.records import Request, Response

CHARS_PER_TOKEN = 4
"""Text tokens are estimated as characters / 4 (OpenAI's rule of thumb for English)."""
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
"""An image is estimated as OpenAI's high-detail cost: 85 + 170 per 512 px tile after the
image is fitted in 2048 x 2048 and its short side scaled to at most 768 px."""


def image_tokens(width: int, height: int) -> int:
    """OpenAI's documented high-detail image cost (an upper bound for low detail)."""
    if width <= 0 or height <= 0:
        return IMAGE_BASE_TOKENS
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * math.ceil(w / 512) * math.ceil(h / 512)


def estimate_tokens(request: Request) -> int:
    """What a request may cost before it is sent: prompt text, images and the completion's
    ceiling (`max_tokens`), so the estimate is rarely below the real cost."""
    chars = 0
    images = 0
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, str):
                chars += len(part)
            else:
                images += image_tokens(part.width, part.height)
    return chars // CHARS_PER_TOKEN + images + request.settings.max_tokens


def used_tokens(response: Response) -> int | None:
    """The tokens the server says the request used, or None when it does not say."""
    if response.prompt_tokens is None and response.completion_tokens is None:
        return None
    return (response.prompt_tokens or 0) + (response.completion_tokens or 0)


class TokenBucket:
    """`per_minute` units a minute; a taker waits while the bucket is in debt."""

    capacity = 0.0  # nothing saved up while idle: no burst, ever

    def __init__(self, per_minute: float, clock=time.monotonic):
        self.rate = per_minute / 60.0
        self.level = 0.0
        self._clock = clock
        self._at = clock()

    def refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._at) * self.rate)
        self._at = now

    def wait_s(self) -> float:
        """Seconds until the bucket is out of debt (0: a request may go now)."""
        self.refill()
        return 0.0 if self.level >= 0 else -self.level / self.rate

    def take(self, amount: float) -> None:
        self.level -= amount

    def give_back(self, amount: float) -> None:
        """Correct an estimate (negative: the request cost more than charged)."""
        self.level = min(self.capacity, self.level + amount)


@dataclass
class LimitStats:
    waited_s: float = 0.0


class RateLimiter:
    """Requests and tokens per minute for one model, over all its endpoints. Takers queue
    in order (asyncio.Lock is FIFO), so no request starves."""

    def __init__(self, rpm: int | None = None, tpm: int | None = None):
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None
        self.stats = LimitStats()
        self._lock = asyncio.Lock()
        self._refunded = asyncio.Event()

    async def take(self, request: Request) -> int:
        """Wait until the request may go; returns the tokens charged (for `settle`). A
        refund (an answer that cost less than charged) ends the wait early."""
        cost = estimate_tokens(request) if self.tokens is not None else 0
        async with self._lock:
            while (wait := self._wait_s()) > 0:
                started = time.monotonic()
                self._refunded.clear()
                try:
                    async with asyncio.timeout(wait):
                        await self._refunded.wait()
                except TimeoutError:
                    pass
                self.stats.waited_s += time.monotonic() - started
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None:
                self.tokens.take(cost)
        return cost

    def _wait_s(self) -> float:
        return max(bucket.wait_s() for bucket in (self.requests, self.tokens)
                   if bucket is not None)

    def settle(self, charged: int, response: Response | None) -> None:
        """Replace the estimate with the usage the server reported (if it reported any)."""
        if self.tokens is None or response is None:
            return
        used = used_tokens(response)
        if used is not None:
            self.tokens.give_back(charged - used)
            if charged > used:
                self._refunded.set()
