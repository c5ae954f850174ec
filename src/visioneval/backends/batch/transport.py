"""HTTP calls of the batch APIs over a backend's own session, key headers, reply cap and
redaction (`HttpBackend`): every failure comes back as a `BatchFailure`, never raised. A
results file is read line by line as it arrives (`answer_lines`), never whole."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from visioneval.backends import replies, wire
from visioneval.backends.base import AuthError, BackendError, TransientError
from visioneval.backends.batch.base import (
    BatchAnswers,
    BatchFailure,
    checked_id,
    error_answer,
    segment,
)
from visioneval.backends.http import HttpBackend
from visioneval.backends.keys import redact_url
from visioneval.core.records import Response

FILE_CAP_BYTES = 4 * 2**30
"""The most of a results file read: a batch holds up to 200-256 MB of requests, and its
answers are a fraction of that (images go in, text comes out)."""

LINE_HEAD_BYTES = 4096
"""What is kept of an answer line over the cap: its start, where its custom_id is."""

CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"')
"""A custom_id as both providers allow them (1-64 of letters, digits, `-`, `_`), in the
first bytes of a line that is not read whole: in JSON a string's own quotes are escaped,
so the first unescaped `"custom_id"` is a key, and both providers write it first."""


async def call(backend: HttpBackend, method: str, path: str, *,
               data: bytes | aiohttp.MultipartWriter | None = None, cap: int | None = None,
               lines: JsonLines | None = None) -> Any:
    """`method` `path` on the backend's server: the decoded JSON, or a BatchFailure of one
    line saying what went wrong. With `lines`, a body that is no error is cut into lines
    as it arrives, each handed to `lines` and none kept; the call then answers None."""
    session = backend._session_or_new()
    url = backend.url(path)
    shown = f"{method} {redact_url(url)}"
    limit = cap or backend._limits.max_reply_bytes
    headers = {"Content-Type": data.content_type} \
        if isinstance(data, aiohttp.MultipartWriter) else None
    try:
        async with session.request(method, url, data=data, headers=headers,
                                   allow_redirects=False) as resp:
            status, resp_headers = resp.status, resp.headers
            if 300 <= status < 400:
                return BatchFailure(backend.redact(
                    f"{shown}: HTTP {status} redirect to {wire.location(resp_headers, url)}; "
                    "API calls follow no redirect"))
            if status >= 400:
                body = await backend._read(resp, status)
            elif lines is not None:
                async for piece in wire.decoded_chunks(resp, limit):
                    lines.feed(piece)
                lines.end()
                return None
            else:
                body = await wire.read_capped(resp, limit)
    except aiohttp.ClientConnectorError as exc:
        return BatchFailure(backend.redact(f"cannot connect to {backend.base_url}: "
                                           f"{exc.os_error}"), transient=True)
    except wire.WIRE_ERRORS as exc:
        return BatchFailure(backend.redact(f"{shown}: {wire.failure_reason(exc)}"),
                            transient=True)
    except wire.ReplyTooLarge:
        return BatchFailure(f"{shown}: reply over {limit / 2**20:g} MB; not read further")
    except BackendError as exc:  # a compressed body that does not decode, an odd encoding
        return BatchFailure(backend.redact(f"{shown}: {exc}"),
                            transient=isinstance(exc, TransientError))
    try:
        return backend._decode(status, resp_headers, body)
    except AuthError as exc:
        return BatchFailure(exc.key_line)
    except BackendError as exc:
        return BatchFailure(backend.redact(f"{shown}: {exc}"),
                            transient=isinstance(exc, TransientError))


class JsonLines:
    """A JSONL body cut into lines as it arrives, each handed to `each` at once with
    `whole` True. A line over `line_cap` bytes is not kept: `each` gets its first
    LINE_HEAD_BYTES with `whole` False, and the rest of it is passed over. Blank lines are
    left out."""

    __slots__ = ("each", "line_cap", "_part", "_over")

    def __init__(self, each: Callable[[bytes, bool], None], line_cap: int):
        self.each = each
        self.line_cap = line_cap
        self._part = bytearray()  # the line begun in an earlier piece
        self._over = False  # it passed the cap: only its head is kept

    def feed(self, piece: bytes) -> None:
        start = 0
        while (end := piece.find(b"\n", start)) >= 0:
            if self._part or self._over:
                self._add(piece, start, end)
                self._flush()
            else:  # the whole line is in this piece: no copy
                self._line(piece[start:end])
            start = end + 1
        if start < len(piece):
            self._add(piece, start, len(piece))

    def end(self) -> None:
        """The body ended: a last line without its newline is a line too."""
        if self._part or self._over:
            self._flush()

    def _add(self, piece: bytes, start: int, end: int) -> None:
        if self._over:
            return
        self._part += memoryview(piece)[start:end]
        if len(self._part) > self.line_cap:
            del self._part[LINE_HEAD_BYTES:]
            self._over = True

    def _flush(self) -> None:
        line, over = bytes(self._part), self._over
        self._part, self._over = bytearray(), False
        if over:
            self.each(line, False)
        else:
            self._line(line)

    def _line(self, line: bytes) -> None:
        if len(line) > self.line_cap:
            self.each(line[:LINE_HEAD_BYTES], False)
        elif line.strip():
            self.each(line, True)


def answer_lines(answers: BatchAnswers, answer: Callable[[dict[str, Any]], Response],
                 line_cap: int) -> JsonLines:
    """The reader of a results file: each line's answer (`answer` of the line's object)
    into `answers` under its custom_id. A line over `line_cap` bytes (a reply larger than
    --max-reply-mb) or not JSON is an error answer for the request its first bytes name;
    one that names none answers nothing (its request, unanswered, is an error too)."""
    too_long = f"batch answer over {line_cap / 2**20:.3g} MB (--max-reply-mb); not read"

    def each(line: bytes, whole: bool) -> None:
        problem = too_long
        if whole:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                problem = "batch answer line is not JSON"
            else:
                if isinstance(value, dict) and isinstance(value.get("custom_id"), str):
                    answers.add(value["custom_id"], answer(value))
                return
        found = CUSTOM_ID.search(line, 0, LINE_HEAD_BYTES)
        if found is not None:
            answers.add(found.group(1).decode(), error_answer(problem))

    return JsonLines(each, line_cap)


def id_in(reply: Any, where: str, what: str) -> str | BatchFailure:
    """The `id` of a provider's reply (a created file or batch), or a transient failure
    saying the reply had none."""
    found = reply.get("id") if isinstance(reply, dict) else None
    if isinstance(found, str):
        return checked_id(found, what)
    return BatchFailure(f"{where} answered no {what} id: {replies.describe(reply)}",
                        transient=True)


LIST_PAGES = 50  # pages of a batch list read at most when looking a batch up
LIST_SLACK_S = 60.0  # how much earlier than its entry a batch may be stamped (clocks differ)


async def batches_since(backend: HttpBackend, path: str, cursor: str,
                        created: Callable[[dict[str, Any]], float | None], since: float
                        ) -> list[dict[str, Any]] | BatchFailure:
    """The provider's batches created at or after `since` (less `LIST_SLACK_S`), newest
    first, read page by page (`cursor`: the list's paging parameter, the last id of a
    page) until a page reaches older batches or the list ends."""
    found: list[dict[str, Any]] = []
    after = None
    for _ in range(LIST_PAGES):
        page = await call(backend, "GET", f"{path}?limit=100" +
                          (f"&{cursor}={segment(after)}" if after else ""))
        if isinstance(page, BatchFailure):
            return page
        items = [item for item in (page.get("data") if isinstance(page, dict) else None)
                 or [] if isinstance(item, dict) and
                 not isinstance(checked_id(item.get("id"), "batch"), BatchFailure)]
        stamps = [created(item) for item in items]
        found.extend(item for item, stamp in zip(items, stamps, strict=True)
                     if stamp is not None and stamp >= since - LIST_SLACK_S)
        older = any(stamp is not None and stamp < since - LIST_SLACK_S for stamp in stamps)
        if older or not items or not (isinstance(page, dict) and page.get("has_more")):
            break
        after = items[-1]["id"]
    return found


async def batch_object(backend: HttpBackend, collection: str, batch_id: str, status_key: str
                       ) -> dict[str, Any] | BatchFailure:
    """GET `collection`/`batch_id`: the batch as its provider describes it, whose
    `status_key` is its status (a string); else a failure (transient: the provider may
    describe it whole when asked again)."""
    if isinstance(checked := checked_id(batch_id, "batch"), BatchFailure):
        return checked
    data = await call(backend, "GET", f"{collection}/{segment(batch_id)}")
    if isinstance(data, BatchFailure):
        return data
    if not isinstance(data, dict) or not isinstance(data.get(status_key), str):
        return BatchFailure(f"GET {collection}/{batch_id}: no {status_key} in "
                            f"{replies.describe(data)}", transient=True)
    return data


async def read_answers(backend: HttpBackend, paths: Iterable[str],
                       answer: Callable[[dict[str, Any]], Response], folder: Path | None
                       ) -> BatchAnswers | BatchFailure:
    """The answers of the results files at `paths`, in order, each read line by line
    (`answer_lines`) into one `BatchAnswers` kept in `folder`; the first failure to read
    one instead."""
    answers = BatchAnswers(folder)
    lines = answer_lines(answers, answer, backend._limits.max_reply_bytes)
    for path in paths:
        read = await call(backend, "GET", path, cap=FILE_CAP_BYTES, lines=lines)
        if isinstance(read, BatchFailure):
            answers.close()
            return read
    return answers
