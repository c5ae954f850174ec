"""Anthropic's Message Batches: the requests go up in one body (POST /v1/messages/batches,
`requests: [{custom_id, params}]`), the batch is polled (GET /v1/messages/batches/{id}) until
`processing_status` is "ended", then its results are read as JSONL (GET .../{id}/results),
each `result.type` succeeded, errored, canceled or expired. Limits: 100,000 requests or
256 MB per batch (Anthropic's batch processing guide)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from visioneval.backends import body, replies
from visioneval.backends.anthropic import (
    AnthropicBackend,
    messages_payload,
    parse_messages_response,
)
from visioneval.backends.base import BackendError
from visioneval.backends.batch.base import (
    BatchAnswers,
    BatchClient,
    BatchFailure,
    BatchLimits,
    BatchState,
    error_answer,
    segment,
)
from visioneval.backends.batch.transport import (
    batch_object,
    batches_since,
    call,
    id_in,
    read_answers,
)
from visioneval.core.records import Request, Response

BATCHES = "/v1/messages/batches"


class AnthropicBatch(BatchClient[AnthropicBackend]):
    provider = "anthropic"
    provider_name = "Anthropic"
    home = "api.anthropic.com"
    limits = BatchLimits(max_requests=100_000, max_bytes=256 * 1_000_000)

    def encode(self, custom: str, request: Request) -> bytes:
        return body.dumps({"custom_id": custom,
                           "params": messages_payload(self.backend.model, request)})

    async def submit(self, lines: list[bytes], tag: str) -> str | BatchFailure:
        # The message batch API keeps no label of ours: `find` tells a batch by its size
        # and time instead.
        created = await call(self.backend, "POST", BATCHES,
                             data=b'{"requests":[' + b",".join(lines) + b"]}")
        if isinstance(created, BatchFailure):
            return created
        return id_in(created, f"POST {BATCHES}", "batch")

    async def find(self, tag: str, requests: int, after: float) -> str | None | BatchFailure:
        """The one batch created since `after` that holds `requests` requests (every page
        of them); None when there is none, or more than one (then none is taken for ours).
        Its requests' custom ids carry the entry's key, so a batch of someone else's of the
        same size taken for ours answers nothing of this run (`custom_id`)."""
        listed = await batches_since(self.backend, BATCHES, "after_id",
                                     lambda item: _time(item.get("created_at")), after)
        if isinstance(listed, BatchFailure):
            return listed
        found = [item["id"] for item in listed if sum(_counts(item).values()) == requests]
        return found[0] if len(found) == 1 else None

    async def poll(self, batch_id: str) -> BatchState | BatchFailure:
        data = await batch_object(self.backend, BATCHES, batch_id, "processing_status")
        if isinstance(data, BatchFailure):
            return data
        status = data["processing_status"]
        numbers = _counts(data)
        failed = sum(numbers.get(k, 0) for k in ("errored", "canceled", "expired"))
        return BatchState(batch_id, status, status == "ended",
                          sum(numbers.values()) if numbers else None,
                          numbers.get("succeeded"), failed if numbers else None)

    async def results(self, state: BatchState, folder: Path | None = None
                      ) -> BatchAnswers | BatchFailure:
        # Read at its canonical path on the same server (the key goes nowhere else), not
        # at whatever `results_url` names; line by line.
        return await read_answers(self.backend,
                                  [f"{BATCHES}/{segment(state.batch_id)}/results"],
                                  lambda line: self._answer(line.get("result")), folder)

    def _answer(self, result: Any) -> Response:
        if not isinstance(result, dict):
            return error_answer(f"batch result is {replies.describe(result)}")
        kind = result.get("type")
        if kind == "succeeded":
            try:
                return parse_messages_response(result.get("message"), self.backend.metadata)
            except BackendError as exc:
                return error_answer(str(exc))
        if kind == "errored":
            error = result.get("error")
            inner = error.get("error", error) if isinstance(error, dict) else error
            message = inner.get("message") if isinstance(inner, dict) else None
            code = inner.get("type") if isinstance(inner, dict) else None
            return error_answer(self.backend.redact(
                f"batch request failed: {code or 'error'}: "
                f"{message if isinstance(message, str) else replies.describe(inner)}"[:400]))
        if kind in ("canceled", "expired"):
            return error_answer(f"batch request {kind} before it was answered")
        return error_answer(f"batch result of unknown type {replies.describe(kind)}")


def _time(value: Any) -> float | None:
    """Seconds since the epoch of an RFC 3339 time; None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _counts(batch: dict[str, Any]) -> dict[str, int]:
    """A batch's request_counts (processing, succeeded, errored, canceled, expired) that
    are numbers; empty without them."""
    counts = batch.get("request_counts")
    return {k: v for k, v in counts.items() if type(v) is int} \
        if isinstance(counts, dict) else {}
