"""HTTP calls of the batch APIs over a backend's own session, key headers, reply cap and
redaction (`HttpBackend`): every failure comes back as a `BatchFailure`, never raised."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp

from visioneval.backends import wire
from visioneval.backends.base import AuthError, BackendError, TransientError
from visioneval.backends.batch.base import BatchFailure
from visioneval.backends.http import HttpBackend
from visioneval.backends.keys import redact_url

FILE_CAP_BYTES = 4 * 2**30
"""The most of a results file read: a batch holds up to 200-256 MB of requests, and its
answers are a fraction of that (images go in, text comes out)."""


async def call(backend: HttpBackend, method: str, path: str, *,
               data: bytes | aiohttp.MultipartWriter | None = None, raw: bool = False,
               cap: int | None = None) -> Any:
    """`method` `path` on the backend's server: the decoded JSON (with `raw`, the body's
    bytes), or a BatchFailure of one line saying what went wrong."""
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
            body = await backend._read(resp, status) if status >= 400 else \
                await wire.read_capped(resp, limit)
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
    if raw and status < 300:
        return body
    try:
        return backend._decode(status, resp_headers, body)
    except AuthError as exc:
        return BatchFailure(exc.key_line)
    except BackendError as exc:
        return BatchFailure(backend.redact(f"{shown}: {exc}"),
                            transient=isinstance(exc, TransientError))


def jsonl(raw: bytes) -> list[Any]:
    """The JSON values of a JSONL file; a line that is not JSON is left out (its request
    then has no answer and becomes an error record)."""
    import orjson

    out = []
    for line in raw.splitlines():
        if line.strip():
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
    return out


def id_in(reply: Any, where: str, what: str) -> str | BatchFailure:
    """The `id` of a provider's reply (a created file or batch), or a transient failure
    saying the reply had none."""
    from visioneval.backends import replies

    found = reply.get("id") if isinstance(reply, dict) else None
    if isinstance(found, str):
        return found
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
                          (f"&{cursor}={after}" if after else ""))
        if isinstance(page, BatchFailure):
            return page
        items = [item for item in (page.get("data") if isinstance(page, dict) else None)
                 or [] if isinstance(item, dict) and isinstance(item.get("id"), str)]
        stamps = [created(item) for item in items]
        found.extend(item for item, stamp in zip(items, stamps, strict=True)
                     if stamp is not None and stamp >= since - LIST_SLACK_S)
        older = any(stamp is not None and stamp < since - LIST_SLACK_S for stamp in stamps)
        if older or not items or not (isinstance(page, dict) and page.get("has_more")):
            break
        after = items[-1]["id"]
    return found
