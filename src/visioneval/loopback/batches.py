"""The loopback server's batch APIs: OpenAI's (files and batches) and Anthropic's Message
Batches, answered by the server's own answer function, so a `--batch` run can be tried and
tested without a provider.

A batch ends `BatchScript.delay_s` after it was created; until then it is in progress. A
share of the requests can be answered with an error (each custom_id only the first time it
comes, so a resume's new batch gets its answer), a batch can expire with only its first
requests answered, as a provider's does when its 24 hours pass, the reply to a batch's
creation can be lost after the batch was made, batches can be refused altogether, and a
batch's first requests can be answered twice (their answer, then an error for the same
custom_id: OpenAI's in the error file, Anthropic's as a second result line).
`BatchBook` counts what arrived per custom_id: a test checks that no request was sent twice.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import orjson
from aiohttp import web

OPENAI_CHAT = "/v1/chat/completions"
ANTHROPIC_MESSAGES = "/v1/messages"


@dataclass(frozen=True)
class BatchScript:
    """How the emulated batch APIs behave. `error_every`: every k-th request that arrives
    (first time its custom_id is seen) is answered with an error; `expire_after`: a batch
    answers only its first N requests and then expires (None: it completes)."""

    delay_s: float = 0.0
    error_every: int = 0
    expire_after: int | None = None
    lose_created: int = 0  # the first N batches are made, but their reply is an HTTP 502
    refuse: bool = False  # every batch is refused (HTTP 400), as by an account without them
    answer_twice: int = 0  # the first N requests of each batch also get an error answer
    # Each batch's id as the server gives it ("{n}": its number), in place of the
    # provider's shape: an id no URL may hold ("../files/file-{n}/content") is refused.
    id_as: str | None = None


class BatchHost(Protocol):
    """What the batch APIs use of the loopback server they are part of."""

    @property
    def base_url(self) -> str: ...

    @property
    def batch_script(self) -> BatchScript: ...

    def authorized(self, request: web.Request) -> bool: ...

    def answer_body(self, protocol: Literal["openai", "anthropic"],
                    body: dict[str, Any]) -> tuple[int, dict[str, Any]]: ...


@dataclass
class _Batch:
    id: str
    protocol: str  # openai or anthropic
    lines: list[dict[str, Any]]
    created: float
    tag: str | None = None
    input_file_id: str | None = None
    results: list[dict[str, Any]] | None = None  # made once, when it ends
    again: list[dict[str, Any]] = field(default_factory=list)  # second answers (answer_twice)
    expired: bool = False


@dataclass
class BatchBook:
    """What the emulated batch APIs received: batches made, and requests per sample (the
    custom_id after its batch's key: the same sample in two batches counts twice)."""

    received: Counter[str] = field(default_factory=Counter)
    batches: int = 0
    polls: int = 0
    file_reads: Counter[str] = field(default_factory=Counter)  # GET /v1/files/{id}/content


class BatchApis:
    """The handlers, bound to one LoopbackServer (its script, answer function and key)."""

    def __init__(self, server: BatchHost):
        self.server = server
        self.book = BatchBook()
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, _Batch] = {}
        self._ids = itertools.count(1)  # files
        self._batch_ids = itertools.count(1)  # batches: a run's first is batch_1
        self._arrivals = 0

    def routes(self, app: web.Application) -> None:
        router = app.router
        router.add_post("/v1/files", self._upload)
        router.add_get("/v1/files/{id}/content", self._content)
        router.add_post("/v1/batches", self._create_openai)
        router.add_get("/v1/batches", self._list_openai)
        router.add_get("/v1/batches/{id}", self._get_openai)
        router.add_post("/v1/messages/batches", self._create_anthropic)
        router.add_get("/v1/messages/batches", self._list_anthropic)
        router.add_get("/v1/messages/batches/{id}", self._get_anthropic)
        router.add_get("/v1/messages/batches/{id}/results", self._results_anthropic)

    @property
    def script(self) -> BatchScript:
        return self.server.batch_script

    def _refused(self, request: web.Request) -> web.Response | None:
        if not self.server.authorized(request):
            return web.json_response({"error": {"message": "invalid key"}}, status=401)
        return None

    # -- OpenAI ----------------------------------------------------------------------------

    async def _upload(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return _error(400, "a batch file goes up as multipart `file` with purpose=batch")
        content = upload.file.read()
        file_id = f"file-{next(self._ids)}"
        self._files[file_id] = content
        return web.json_response({"id": file_id, "object": "file", "bytes": len(content),
                                  "purpose": "batch", "filename": upload.filename})

    async def _content(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        self.book.file_reads[request.match_info["id"]] += 1
        content = self._files.get(request.match_info["id"])
        if content is None:
            return _error(404, "no such file")
        return web.Response(body=content, content_type="application/octet-stream")

    async def _create_openai(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        body = await request.json()
        content = self._files.get(body.get("input_file_id"))
        if content is None or body.get("endpoint") != OPENAI_CHAT or \
                body.get("completion_window") != "24h":
            return _error(400, "input_file_id, endpoint /v1/chat/completions and "
                          "completion_window 24h are required")
        if self.script.refuse:
            return _error(400, "batches are not enabled for this organization")
        lines = [orjson.loads(line) for line in content.splitlines() if line.strip()]
        tag = (body.get("metadata") or {}).get("visioneval_batch")
        batch = self._new("openai", lines, self._batch_id("batch_{n}"), tag)
        batch.input_file_id = body["input_file_id"]
        return self._lost() or web.json_response(self._openai_view(batch))

    async def _list_openai(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        page, more = self._page(request, "openai", "after")
        return web.json_response({"object": "list", "data": [self._openai_view(b) for b in page],
                                  "has_more": more,
                                  "last_id": page[-1].id if page else None})

    async def _get_openai(self, request: web.Request) -> web.Response:
        return self._polled(request, "openai", self._openai_view)

    def _polled(self, request: web.Request, protocol: str,
                view: Callable[[_Batch], dict[str, Any]]) -> web.Response:
        """A poll of one batch: the batch as its protocol describes it (`view`), counted."""
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self._batches.get(request.match_info["id"])
        if batch is None or batch.protocol != protocol:
            return _error(404, "no such batch")
        self.book.polls += 1
        return web.json_response(view(batch))

    def _openai_view(self, batch: _Batch) -> dict[str, Any]:
        ended = self._settle(batch)
        view: dict[str, Any] = {
            "id": batch.id, "object": "batch", "endpoint": OPENAI_CHAT,
            "input_file_id": batch.input_file_id, "completion_window": "24h",
            "created_at": int(batch.created), "metadata": {"visioneval_batch": batch.tag},
            "status": ("expired" if batch.expired else "completed") if ended
            else "in_progress",
            "request_counts": {"total": len(batch.lines), "completed": 0, "failed": 0}}
        if ended and batch.results is not None:
            good = [r for r in batch.results if r["response"]["status_code"] == 200]
            view["request_counts"] |= {"completed": len(good),
                                       "failed": len(batch.lines) - len(good)}
            view["output_file_id"] = self._file(f"{batch.id}-out", good)
            bad = [r for r in batch.results if r["response"]["status_code"] != 200] + \
                batch.again
            if bad:
                view["error_file_id"] = self._file(f"{batch.id}-err", bad)
        return view

    def _file(self, file_id: str, lines: list[dict[str, Any]]) -> str:
        self._files[file_id] = b"".join(orjson.dumps(line) + b"\n" for line in lines)
        return file_id

    # -- Anthropic -------------------------------------------------------------------------

    async def _create_anthropic(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        body = orjson.loads(await request.read())
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _error(400, "requests: a list of {custom_id, params} is required")
        if self.script.refuse:
            return _error(400, "batches are not enabled for this organization")
        batch = self._new("anthropic", requests, self._batch_id("msgbatch_{n:08d}"), None)
        return self._lost() or web.json_response(self._anthropic_view(batch))

    async def _list_anthropic(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        page, more = self._page(request, "anthropic", "after_id")
        return web.json_response({"data": [self._anthropic_view(b) for b in page],
                                  "has_more": more,
                                  "last_id": page[-1].id if page else None})

    async def _get_anthropic(self, request: web.Request) -> web.Response:
        return self._polled(request, "anthropic", self._anthropic_view)

    def _anthropic_view(self, batch: _Batch) -> dict[str, Any]:
        ended = self._settle(batch)
        counts = {"processing": 0 if ended else len(batch.lines), "succeeded": 0,
                  "errored": 0, "canceled": 0, "expired": 0}
        for result in batch.results or []:
            counts[result["result"]["type"]] += 1
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "created_at": _rfc3339(batch.created),
                "results_url": f"{self.server.base_url}/v1/messages/batches/{batch.id}/results"
                if ended else None}

    async def _results_anthropic(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self._batches.get(request.match_info["id"])
        if batch is None or not self._settle(batch):
            return _error(404, "no results (yet) for this batch")
        lines = [*(batch.results or []), *batch.again]
        return web.Response(body=b"".join(orjson.dumps(r) + b"\n" for r in lines),
                            content_type="application/binary")

    # -- both ------------------------------------------------------------------------------

    def _new(self, protocol: str, lines: list[dict[str, Any]], batch_id: str,
             tag: str | None) -> _Batch:
        for line in lines:
            self.book.received[_sample_part(line.get("custom_id"))] += 1
        self.book.batches += 1
        batch = _Batch(batch_id, protocol, lines, time.time(), tag)
        self._batches[batch_id] = batch
        return batch

    def _batch_id(self, shape: str) -> str:
        """A new batch's id: the provider's shape, or the script's `id_as`."""
        return (self.script.id_as or shape).format(n=next(self._batch_ids))

    def _page(self, request: web.Request, protocol: str, cursor: str
              ) -> tuple[list[_Batch], bool]:
        """A page of the list as both providers give it: newest first, `limit` long
        (default 20), after the batch the `cursor` parameter names; and whether more
        follow."""
        newest = [b for b in reversed(self._batches.values()) if b.protocol == protocol]
        after = request.query.get(cursor)
        if after is not None:
            ids = [b.id for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        try:
            limit = max(1, int(request.query.get("limit", "20")))
        except ValueError:
            limit = 20
        return newest[:limit], len(newest) > limit

    def _lost(self) -> web.Response | None:
        """An HTTP 502 in place of the reply to one of the first `lose_created` batches."""
        if self.book.batches > self.script.lose_created:
            return None
        return _error(502, "bad gateway")

    def _settle(self, batch: _Batch) -> bool:
        """Whether `batch` has ended; its results are made the first time it has."""
        if time.time() - batch.created < self.script.delay_s:
            return False
        if batch.results is None:
            batch.results = []
            limit = self.script.expire_after
            for n, line in enumerate(batch.lines):
                if limit is not None and n >= limit:
                    batch.expired = True
                    batch.results.append(self._expired(batch, line))
                else:
                    batch.results.append(self._answered(batch, line))
            batch.again = [self._failed(batch, line.get("custom_id"), "answered twice")
                           for line in batch.lines[:self.script.answer_twice]]
        return True

    def _answered(self, batch: _Batch, line: dict[str, Any]) -> dict[str, Any]:
        custom = line.get("custom_id")
        self._arrivals += 1
        every = self.script.error_every
        fails = bool(every) and self._arrivals % every == 0 and \
            self.book.received[_sample_part(custom)] == 1
        if fails:
            return self._failed(batch, custom, "internal error")
        if batch.protocol == "openai":
            status, data = self.server.answer_body("openai", line.get("body") or {})
            return {"id": f"req_{self._arrivals}", "custom_id": custom,
                    "response": {"status_code": status, "body": data}, "error": None}
        status, data = self.server.answer_body("anthropic", line.get("params") or {})
        if status != 200:
            return {"custom_id": custom, "result": {"type": "errored", "error": {
                "type": "error", "error": {"type": "invalid_request_error",
                                           "message": str(data.get("error"))}}}}
        return {"custom_id": custom, "result": {"type": "succeeded", "message": data}}

    def _failed(self, batch: _Batch, custom: Any, message: str) -> dict[str, Any]:
        """A server error as the request's answer, in the provider's result shape."""
        if batch.protocol == "openai":
            return {"id": f"req_{self._arrivals}", "custom_id": custom,
                    "response": {"status_code": 500, "body": {"error": {
                        "message": message, "type": "server_error"}}},
                    "error": None}
        return {"custom_id": custom, "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "api_error", "message": message}}}}

    def _expired(self, batch: _Batch, line: dict[str, Any]) -> dict[str, Any]:
        custom = line.get("custom_id")
        if batch.protocol == "anthropic":
            return {"custom_id": custom, "result": {"type": "expired"}}
        return {"id": f"req_expired_{custom}", "custom_id": custom,
                "response": {"status_code": 400, "body": None},
                "error": {"code": "batch_expired",
                          "message": "This request could not be executed before the "
                                     "completion window expired."}}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request"}},
                             status=status)


def _rfc3339(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat().replace("+00:00", "Z")


def _sample_part(custom_id: object) -> str:
    """visioneval's custom_id is `<batch key>-<sample digest>`: the sample's part."""
    return str(custom_id).rpartition("-")[2]
