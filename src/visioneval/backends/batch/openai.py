"""OpenAI's Batch API: the requests go up as a JSONL file (POST /files, purpose "batch"), a
batch is made of it (POST /batches, endpoint /v1/chat/completions, window 24h), polled (GET
/batches/{id}) and its output and error files read (GET /files/{id}/content). Limits: 50,000
requests and 200 MB per file (OpenAI's API reference, "Create batch")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from visioneval.backends import body, replies
from visioneval.backends.base import BackendError
from visioneval.backends.batch.base import (
    BatchAnswers,
    BatchClient,
    BatchFailure,
    BatchLimits,
    BatchState,
    checked_id,
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
from visioneval.backends.openai import OpenAIBackend, parse_chat_response
from visioneval.core.records import Request, Response

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
TAG_KEY = "visioneval_batch"


class OpenAIBatch(BatchClient[OpenAIBackend]):
    provider = "openai"
    provider_name = "OpenAI"
    home = "api.openai.com"
    limits = BatchLimits(max_requests=50_000, max_bytes=200 * 1_000_000)

    def encode(self, custom: str, request: Request) -> bytes:
        return body.dumps({"custom_id": custom, "method": "POST", "url": ENDPOINT,
                           "body": self.backend.chat_payload(request)})

    async def submit(self, lines: list[bytes], tag: str) -> str | BatchFailure:
        form = aiohttp.MultipartWriter("form-data")
        form.append("batch").set_content_disposition("form-data", name="purpose")
        part = form.append(b"\n".join(lines) + b"\n", {"Content-Type": "application/jsonl"})
        part.set_content_disposition("form-data", name="file", filename=f"{tag}.jsonl")
        uploaded = await call(self.backend, "POST", "/files", data=form)
        if isinstance(uploaded, BatchFailure):
            return uploaded
        file_id = id_in(uploaded, "POST /files", "file")
        if isinstance(file_id, BatchFailure):
            return file_id
        created = await call(self.backend, "POST", "/batches", data=body.dumps({
            "input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h",
            "metadata": {TAG_KEY: tag}}))
        if isinstance(created, BatchFailure):
            return created
        return id_in(created, "POST /batches", "batch")

    async def find(self, tag: str, requests: int, after: float) -> str | None | BatchFailure:
        """The batch carrying `tag` in its metadata, among those created since `after`
        (every page of them)."""
        listed = await batches_since(self.backend, "/batches", "after", _created, after)
        if isinstance(listed, BatchFailure):
            return listed
        return next((item["id"] for item in listed
                     if (item.get("metadata") or {}).get(TAG_KEY) == tag), None)

    async def poll(self, batch_id: str) -> BatchState | BatchFailure:
        data = await batch_object(self.backend, "/batches", batch_id, "status")
        if isinstance(data, BatchFailure):
            return data
        status = data["status"]
        counts = data.get("request_counts")
        counts = counts if isinstance(counts, dict) else {}
        named = [f for f in (data.get("output_file_id"), data.get("error_file_id"))
                 if f is not None]
        found = [checked_id(f, "file") for f in named]
        files = tuple(f for f in found if isinstance(f, str))
        errors = (data.get("errors") or {}).get("data") if isinstance(data.get("errors"),
                                                                     dict) else None
        said = [str(e.get("message")) for e in errors if isinstance(e, dict)] \
            if isinstance(errors, list) else []
        # A results file named by an id that is not one is not read: its requests end
        # without an answer (errors, sent again on resume), said with the batch.
        said += [f.message for f in found if isinstance(f, BatchFailure)]
        detail = "; ".join(said) or None
        return BatchState(batch_id, status, status in ENDED, _int(counts.get("total")),
                          _int(counts.get("completed")), _int(counts.get("failed")), detail,
                          files)

    async def results(self, state: BatchState, folder: Path | None = None
                      ) -> BatchAnswers | BatchFailure:
        """The output file's answers, then the error file's, each read line by line."""
        return await read_answers(self.backend, [f"/files/{segment(f)}/content"
                                                 for f in state.files], self._answer, folder)

    def _answer(self, line: dict[str, Any]) -> Response:
        """One output line: the chat completion in `response.body` when its status is 200,
        else the error it carries (`error`, or the response's own error body)."""
        response: dict[str, Any] = line["response"] \
            if isinstance(line.get("response"), dict) else {}
        status = response.get("status_code")
        if status == 200:
            try:
                return parse_chat_response(response.get("body"), self.backend.metadata)
            except BackendError as exc:
                return error_answer(str(exc))
        error: Any = line.get("error")
        if not isinstance(error, dict):
            inner = response.get("body")
            error = inner.get("error") if isinstance(inner, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        said = f"HTTP {status}: " if status else ""
        return error_answer(self.backend.redact(
            f"batch request failed: {said}{code or ''}{': ' if code else ''}"
            f"{message if isinstance(message, str) else replies.describe(error)}"[:400]))


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _created(item: dict[str, Any]) -> float | None:
    """An OpenAI batch's creation time (Unix seconds)."""
    stamp = item.get("created_at")
    return float(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) \
        else None
