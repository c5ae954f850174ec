"""What every batch API client does, and the values it answers with.

A batch client never raises for a failure on the wire or a refusal by the provider: each
call returns a `BatchFailure` (one line, scrubbed of keys) the caller decides on. A sample's
request goes in under a `custom_id` made from its id (a digest: providers accept only short
ids of letters, digits, `-` and `_`), so answers find their samples in any order.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from decimal import Decimal

from visioneval.core.records import Request, Response

BATCH_DISCOUNT = Decimal("0.5")
"""What a batch request costs against the same request sent alone: half, at OpenAI (Batch
API guide: "50% cost discount") and Anthropic (Message Batches: "reducing costs by 50%")."""


@dataclass(frozen=True)
class BatchFailure:
    """A call that did not work. `transient`: asking again later may work (a dropped
    connection, HTTP 429 or 5xx); else it will not (a refused key, no batch API there)."""

    message: str
    transient: bool = False


@dataclass(frozen=True)
class BatchLimits:
    """How much one batch may hold: requests and bytes (the provider's published limits)."""

    max_requests: int
    max_bytes: int


@dataclass(frozen=True)
class BatchState:
    """A batch as its provider describes it when polled. `ended`: no answer will change any
    more (finished, failed, expired or cancelled); `status` is the provider's own word."""

    batch_id: str
    status: str
    ended: bool
    total: int | None = None
    answered: int | None = None
    failed: int | None = None
    detail: str | None = None
    files: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class BatchAnswers:
    """What an ended batch answered: each custom_id's Response (an error Response for a
    request the provider answered with an error, or that expired)."""

    answers: dict[str, Response]


def custom_id(batch_key: str, sample_id: str) -> str:
    """The id a sample's request carries in a batch: the batch's own key (run.json's
    entry) and a digest of the sample id, 51 characters of [a-z0-9-] (Anthropic allows
    64). An answer is taken only under its own batch's key, so a batch of someone else's
    taken up by mistake gives no answer to this run."""
    return f"{batch_key}-v{hashlib.blake2b(sample_id.encode(), digest_size=16).hexdigest()}"


class BatchClient(ABC):
    """One provider's batch API on one server and key. `provider` names it in run.json."""

    provider: str = "batch"
    limits: BatchLimits

    @abstractmethod
    def encode(self, custom: str, request: Request) -> bytes:
        """One request as the batch holds it (a JSONL line, or an element of a list)."""

    @abstractmethod
    async def submit(self, lines: list[bytes], tag: str) -> str | BatchFailure:
        """Create a batch of `lines`; its id. `tag` marks it so `find` can tell it again."""

    @abstractmethod
    async def find(self, tag: str, requests: int, after: float) -> str | None | BatchFailure:
        """The id of a batch created with `tag` (holding `requests`, created after the Unix
        time `after`), if the provider has one: what a resume asks about a batch whose
        creation was not recorded (the process ended in between)."""

    @abstractmethod
    async def poll(self, batch_id: str) -> BatchState | BatchFailure:
        """The batch's state now."""

    @abstractmethod
    async def results(self, state: BatchState) -> BatchAnswers | BatchFailure:
        """The answers of an ended batch."""


def error_answer(message: str) -> Response:
    return Response(error=message)
