"""Shared HTTP plumbing for the server backends: one aiohttp session, one error mapping.

The official `openai` client costs about 4 ms of CPU per request, which caps a 2-core
machine well below the throughput a loopback server allows; a bare aiohttp session with
orjson keeps the same request and response shapes at a fraction of that.

A server may be broken or hostile: no request follows a redirect (a key header would go
along to wherever it points), a reply is read up to `HttpLimits.max_reply_bytes` decoded,
and any failure on the wire is a failed attempt with one line (`wire`), never a crash.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp
import orjson

from visioneval.backends import body, wire
from visioneval.backends.base import (
    AuthError,
    Backend,
    BackendError,
    ConnectError,
    NotFound,
    PermanentError,
    PreflightError,
    Sender,
    TransientError,
    Unreachable,
)
from visioneval.backends.keys import MASK, MODEL_FLAGS, TargetFlags, redact_url, url_secrets
from visioneval.backends.replies import MetadataReader

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
ERROR_BODY_BYTES = 64 * 1024
"""What is read of an error reply (HTTP 4xx/5xx): enough for its message."""


@dataclass(frozen=True)
class HttpLimits:
    """What one reply may cost: its size once decoded (`max_reply_bytes`, --max-reply-mb)
    and the time a preflight GET may take (`preflight_timeout_s`, the per-attempt
    --timeout). A run's requests are timed by the engine, not here."""

    max_reply_bytes: int = 32 * 2**20
    preflight_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_reply_bytes < 1 or not self.preflight_timeout_s > 0:
            raise ValueError(f"reply cap and preflight timeout must be positive: {self}")

    def too_large(self) -> str:
        return (f"reply over {self.max_reply_bytes / 2**20:g} MB (--max-reply-mb); not read "
                "further")


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HttpBackend(Backend):
    """A backend that speaks JSON over HTTP with an optional secret header. `flags`: the
    options that name its server and key on the command in use, for the lines that say
    what to change (`--judge-base-url` for a judge, not `--base-url`)."""

    default_base_url: str = ""
    """The provider's own server: where requests go when no `base_url` is given."""

    def __init__(self, model: str, base_url: str | None = None, *, api_key: str | None = None,
                 api_key_env: str | None = None, connections: int = 64,
                 limits: HttpLimits | None = None, flags: TargetFlags = MODEL_FLAGS):
        if base_url is None:
            base_url = self.default_base_url
        parts = urlsplit(base_url)
        path = parts.path.rstrip("/")
        # `base_url` (messages, run.json, the cache key) never holds credentials; requests
        # use them: a user and password as Basic auth, key-like query values as given.
        super().__init__(model, redact_url(urlunsplit((parts.scheme, parts.netloc, path,
                                                       parts.query, ""))))
        self._prefix = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path, "", ""))
        self._query = parts.query
        self._secrets = [s for s in url_secrets(base_url) if len(s) >= 4]
        self._basic = (_basic_auth(unquote(parts.username), unquote(parts.password or ""))
                       if parts.username else None)
        self._api_key = api_key
        self._api_key_env = api_key_env
        self.flags = flags
        if self._basic and "Authorization" in self.auth_headers():
            raise PreflightError(f"{self.base_url} carries a user and password and a key is "
                                 "set too; give one of them")
        self._connections = connections
        self._limits = limits or HttpLimits()
        self._session: aiohttp.ClientSession | None = None
        self._slots: _Slots | None = None
        self.metadata = MetadataReader(self.name)

    def auth_headers(self) -> dict[str, str]:
        return {}

    def redact(self, text: str) -> str:
        """Error texts may echo headers or URLs; no key or password leaves in a message."""
        for secret in ([self._api_key] if self._api_key else []) + self._secrets:
            text = text.replace(secret, MASK)
        return text

    def url(self, path: str) -> str:
        """The request URL: base path + `path`, with the base URL's query kept."""
        if not self._query:
            return self._prefix + path
        return f"{self._prefix}{path}{'&' if '?' in path else '?'}{self._query}"

    def slot(self, request: Any) -> AbstractAsyncContextManager[Sender]:
        """One of `connections` slots: a request never waits for a connection inside its
        timeout. (A dispatcher in front of several backends counts slots itself.)"""
        if self._slots is None:
            self._slots = _Slots(self, self._connections)
        return self._slots

    def _session_or_new(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._connections, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={"Content-Type": "application/json",
                         "Accept-Encoding": wire.ACCEPT_ENCODING, **self.auth_headers(),
                         **({"Authorization": self._basic} if self._basic else {})},
                # The engine's retry policy owns the per-attempt timeout.
                timeout=aiohttp.ClientTimeout(total=None),
                auto_decompress=False,  # wire.read_capped decodes under the cap
                json_serialize=lambda obj: orjson.dumps(obj).decode(),
            )
        return self._session

    async def post_json(self, path: str, payload: dict[str, Any]) -> Any:
        """POST a JSON body; map every failure to TransientError or PermanentError."""
        # The payload (and any base64 it holds) is freed before the request waits.
        data = body.dumps(payload)
        del payload
        session = self._session_or_new()
        url = self.url(path)
        try:
            async with session.post(url, data=data, allow_redirects=False) as resp:
                status, headers = resp.status, resp.headers
                if 300 <= status < 400:
                    raise PermanentError(self.redact(
                        f"HTTP {status} redirect to {wire.location(headers, url)}; API calls "
                        f"follow no redirect (give that server as {self.flags.url} if it is "
                        "the right one)"))
                raw = await self._read(resp, status)
        except aiohttp.ClientConnectorError as exc:  # nothing reached the server
            raise ConnectError(self.redact(f"cannot connect: {exc.os_error}")) from None
        except wire.WIRE_ERRORS as exc:
            raise TransientError(self.redact(wire.failure_reason(exc))) from None
        except wire.ReplyTooLarge:
            raise PermanentError(self._limits.too_large()) from None
        if status == 404:
            raise NotFound(self.redact(f"HTTP 404 from {redact_url(url)}: {_snippet(raw)}"),
                           redact_url(url))
        return self._decode(status, headers, raw)

    async def _read(self, resp: aiohttp.ClientResponse, status: int) -> bytes:
        """The body under the cap; of an error reply only its first bytes, for the message."""
        if status >= 400:  # the status decides; a body that does not decode only says less
            limit = min(self._limits.max_reply_bytes, ERROR_BODY_BYTES)
            try:
                return await wire.read_capped(resp, limit, truncate=True)
            except BackendError as exc:
                return str(exc).encode()
        return await wire.read_capped(resp, self._limits.max_reply_bytes)

    async def get_json(self, path: str) -> tuple[int, Any]:
        """GET for preflight; a server that cannot be reached or answers no readable reply
        is an Unreachable, a redirect or an oversized reply a PreflightError."""
        session = self._session_or_new()
        url = self.url(path)
        limits = self._limits
        try:
            async with asyncio.timeout(limits.preflight_timeout_s):
                async with session.get(url, allow_redirects=False) as resp:
                    status = resp.status
                    if 300 <= status < 400:
                        raise PreflightError(self.redact(
                            f"{redact_url(url)} redirects to "
                            f"{wire.location(resp.headers, url)} (HTTP {status}) and API calls "
                            "follow no redirect: if that is the right server, give its URL "
                            f"as {self.flags.url}"))
                    raw = await self._read(resp, status)
        except TimeoutError:
            raise Unreachable(f"cannot reach {self.name} server at {self.base_url}: no "
                              f"answer within {limits.preflight_timeout_s:g} s") from None
        except aiohttp.ClientConnectorError as exc:
            raise Unreachable(self.redact(f"cannot reach {self.name} server at "
                                          f"{self.base_url}: {exc.os_error}")) from None
        except wire.WIRE_ERRORS as exc:
            raise self._unreadable(path, wire.failure_reason(exc)) from None
        except TransientError as exc:  # a compressed body that does not decode
            raise self._unreadable(path, str(exc)) from None
        except wire.ReplyTooLarge:
            raise PreflightError(f"{redact_url(url)}: {limits.too_large()}") from None
        except PermanentError as exc:
            raise PreflightError(self.redact(f"{redact_url(url)}: {exc}")) from None
        try:
            return status, orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            return status, None

    def _unreadable(self, path: str, reason: str) -> Unreachable:
        return Unreachable(self.redact(f"cannot reach {self.name} server at {self.base_url} "
                                       f"(GET {path}): {reason}"))

    def _decode(self, status: int, headers: Any, raw: bytes) -> Any:
        if status in RETRYABLE_STATUS or status >= 500:
            raise TransientError(self.redact(f"HTTP {status}: {_snippet(raw)}"),
                                 retry_after=parse_retry_after(headers),
                                 throttled=status == 429)
        if status in (401, 403):
            raise AuthError(self.redact(f"HTTP {status}: {_snippet(raw)}"),
                            self.key_line(status))
        if status >= 400:
            raise PermanentError(self.redact(f"HTTP {status}: {_snippet(raw)}"))
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise TransientError(self.redact(f"HTTP {status} with a body that is not JSON: "
                                             f"{_snippet(raw)}")) from None

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    def key_line(self, status: int) -> str:
        """One line about the key a 401/403 refused: its variable's name, never its value."""
        env_name = self._api_key_env if self._api_key else None
        key = self.flags.key
        where = (f"the key in ${env_name}" if env_name else
                 f"no key was sent (a key goes only to its own host unless {key} names it)")
        return (f"{self.base_url} refused the request (HTTP {status}): {where}; set the "
                f"right key or use {key} NAME")

    def check_auth_status(self, status: int) -> None:
        """Turn a 401/403 at preflight into one line naming the key's variable."""
        if status in (401, 403):
            raise PreflightError(self.key_line(status))


class _Slots:
    """A semaphore as the backend's slot: entering waits for a free connection."""

    __slots__ = ("backend", "_free")

    def __init__(self, backend: HttpBackend, n: int):
        self.backend = backend
        self._free = asyncio.Semaphore(n)

    async def __aenter__(self) -> Sender:
        await self._free.acquire()
        return self.backend

    async def __aexit__(self, *exc: object) -> None:
        self._free.release()


def _snippet(raw: bytes, limit: int = 300) -> str:
    text = raw.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return text[:limit] + ("..." if len(text) > limit else "") if text else "(empty body)"


def _basic_auth(user: str, password: str) -> str:
    """RFC 7617 Basic credentials (aiohttp's BasicAuth helper is deprecated)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
