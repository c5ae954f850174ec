"""What comes off the wire, read so that no server can hurt the run: a reply body read with a
cap on its decoded size, gzip and deflate decoded here under that cap, and every way an HTTP
exchange can break turned into one short line.

aiohttp decodes Content-Encoding itself, but how much one step may expand depends on its
version (3.14 bounds a step unless `resp.read()` lifts the bound; the older releases this
project allows decode each network chunk whole), so the session asks for gzip or deflate
only and decodes them here with the standard zlib, never producing more than the bytes still
allowed.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urljoin

import aiohttp
from aiohttp import http_exceptions

from visioneval.backends.base import PermanentError, TransientError
from visioneval.backends.keys import MASK, redact_url

ACCEPT_ENCODING = "gzip, deflate"
"""What the session asks for: the encodings `read_capped` decodes."""

_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}
_IDENTITY = frozenset({"", "identity"})

WIRE_ERRORS: tuple[type[BaseException], ...] = (
    aiohttp.ClientError,  # connections, parser errors (ClientResponseError), payload errors
    http_exceptions.HttpProcessingError,  # a parser error not wrapped by the client
    ValueError,  # includes UnicodeError: undecodable headers, bad numbers in them
    EOFError,  # includes asyncio.IncompleteReadError
    OSError,  # sockets, TLS
)
"""Every way an exchange with a broken or hostile server fails on our side of the wire."""

REASON_CHARS = 160


class ReplyTooLarge(Exception):
    """The decoded body passed the cap; nothing more is read."""


async def read_capped(resp: aiohttp.ClientResponse, limit: int, *,
                      truncate: bool = False) -> bytes:
    """The body, decoded, if it is at most `limit` bytes; past that ReplyTooLarge, or with
    `truncate` its first `limit` bytes. Memory stays near `limit`: each network chunk is
    decoded to at most the bytes still allowed plus one."""
    inflate = _inflate_for(resp)
    content = resp.content
    parts: list[bytes] = []
    size = 0
    while chunk := await content.readany():
        if inflate is not None:
            chunk = inflate.feed(chunk, limit - size + 1)
        size += len(chunk)
        parts.append(chunk)
        if size > limit:
            if truncate:
                return b"".join(parts)[:limit]
            raise ReplyTooLarge
    if inflate is not None:
        inflate.finish()
    return parts[0] if len(parts) == 1 else b"".join(parts)


STREAM_STEP = 2**20
"""The most `decoded_chunks` decodes at a time: a compressed chunk that expands a
thousandfold is handed on a MiB at a time, never whole."""


async def decoded_chunks(resp: aiohttp.ClientResponse, limit: int) -> AsyncIterator[bytes]:
    """The body, decoded, a piece at a time (each at most `STREAM_STEP` bytes once
    decoded), for a reader that keeps none of it whole; ReplyTooLarge once more than
    `limit` bytes were decoded."""
    inflate = _inflate_for(resp)
    content = resp.content
    size = 0
    while chunk := await content.readany():
        pieces = (chunk,) if inflate is None else inflate.pieces(chunk, STREAM_STEP)
        for piece in pieces:
            size += len(piece)
            if size > limit:
                raise ReplyTooLarge
            yield piece
    if inflate is not None:
        inflate.finish()


def _inflate_for(resp: aiohttp.ClientResponse) -> _Inflate | None:
    encoding = resp.headers.get("Content-Encoding", "").strip().lower()
    if encoding in _IDENTITY:
        return None
    wbits = _WBITS.get(encoding)
    if wbits is None:
        raise PermanentError(
            f"reply in Content-Encoding {printable(encoding)[:40]!r}, which was not asked "
            f"for (visioneval asks for {ACCEPT_ENCODING})")
    return _Inflate(encoding, wbits)


class _Inflate:
    """gzip (every member, as `gzip.decompress` reads them) or deflate (zlib-wrapped, as RFC
    9110 says, or raw, as some servers send it), decoded a chunk at a time."""

    __slots__ = ("encoding", "wbits", "obj", "fed")

    def __init__(self, encoding: str, wbits: int):
        self.encoding = encoding
        self.wbits = wbits
        self.obj: Any = None
        self.fed = False

    def feed(self, data: bytes, max_out: int) -> bytes:
        """At most `max_out` bytes decoded from `data` (`max_out` itself means: too many)."""
        out: list[bytes] = []
        room = max_out
        try:
            while data and room > 0:
                if self.obj is None or self.obj.eof:
                    self._start(data)
                piece = self.obj.decompress(data, room)
                room -= len(piece)
                out.append(piece)
                data = self.obj.unused_data if self.obj.eof else self.obj.unconsumed_tail
        except zlib.error as exc:
            raise self._broken(str(exc)) from None
        return b"".join(out) if len(out) != 1 else out[0]

    def pieces(self, data: bytes, step: int) -> Iterator[bytes]:
        """All that `data` decodes to, `step` bytes at most at a time; what zlib holds back
        once the output is full is asked for before the next input is taken."""
        try:
            while True:
                if data and (self.obj is None or self.obj.eof):
                    self._start(data)
                if self.obj is None:
                    return
                piece = self.obj.decompress(data, step)
                if piece:
                    yield piece
                data = self.obj.unused_data if self.obj.eof else self.obj.unconsumed_tail
                if not data and len(piece) < step:
                    return
        except zlib.error as exc:
            raise self._broken(str(exc)) from None

    def _start(self, data: bytes) -> None:
        if self.obj is not None and self.wbits != 31:
            raise self._broken("data after the end of the deflate stream")
        wbits = self.wbits
        if wbits == 15 and data[0] & 0x0F != 8:  # no zlib header: raw deflate
            wbits = -15
        self.obj = zlib.decompressobj(wbits)
        self.fed = True

    def finish(self) -> None:
        if self.fed and not self.obj.eof:
            raise self._broken("the compressed body ends early")

    def _broken(self, why: str) -> TransientError:
        return TransientError(f"malformed HTTP reply: the {self.encoding} body does not "
                              f"decode ({why})")


def failure_reason(exc: BaseException) -> str:
    """One line for a failed exchange: what broke, without the raw bytes aiohttp's parser
    quotes after it (a caller still scrubs secrets)."""
    if isinstance(exc, (aiohttp.ClientResponseError,  # the reply's head did not parse
                        http_exceptions.HttpProcessingError)):
        return f"malformed HTTP reply: {_parser_message(str(exc.message))}"
    if isinstance(exc, aiohttp.ClientPayloadError):
        cause = exc.__cause__ or exc.__context__
        detail = (_parser_message(str(cause.message))
                  if isinstance(cause, http_exceptions.HttpProcessingError) else str(exc))
        return f"malformed HTTP reply body: {_short(detail)}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "connection failed: the server closed the connection before a whole reply"
    if isinstance(exc, (aiohttp.ClientConnectionError, OSError, EOFError)):
        return f"connection failed: {_named(exc)}"
    if isinstance(exc, ValueError):
        return f"malformed HTTP reply: {_named(exc)}"
    return f"HTTP client error: {_named(exc)}"


_LINE_TOO_LONG = re.compile(r"Got more than (\d+) bytes")


def _parser_message(message: str) -> str:
    """aiohttp's parser says what is wrong, then quotes the offending bytes after a blank
    line (C parser) or a colon (its line-length check); keep what is wrong."""
    if match := _LINE_TOO_LONG.search(message):
        return f"header or status line over {match[1]} bytes"
    head = message.split("\n\n", 1)[0]
    head = re.split(r":? b['\"]", head, maxsplit=1)[0]
    return _short(head.rstrip(" :."))


def _named(exc: BaseException) -> str:
    text = str(exc)
    return _short(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def _short(text: str) -> str:
    text = printable(" ".join(text.split()))
    return text[:REASON_CHARS] + ("..." if len(text) > REASON_CHARS else "") or "(no detail)"


def printable(text: str) -> str:
    """Text a journal, log or terminal can take: control characters and undecodable header
    bytes (surrogates) become `?`."""
    return "".join(c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else "?"
                   for c in text)


def location(headers: Any, request_url: str) -> str:
    """Where a redirect points, absolute and without credentials (the caller also scrubs
    its own key, in case the server echoed it)."""
    where = headers.get("Location")
    if not where:
        return "(no Location)"
    where = printable(where)
    try:
        return redact_url(urljoin(request_url, where))[:300]
    except ValueError:  # not a URL at all: no userinfo, no query shown
        head = re.sub(r"//[^/@]*@", f"//{MASK}@", where.split("?", 1)[0])
        return head[:300] + (f"?{MASK}" if "?" in where else "")
