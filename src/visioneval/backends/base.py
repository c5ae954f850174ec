"""One async interface for every model backend.

A backend makes one attempt per `complete` call and says, by the exception it raises,
whether the failure is worth retrying; retries, timeouts and error records are the
engine's job (`visioneval.engine.retry`), so every backend behaves the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from visioneval.core.records import Request, Response


class BackendError(Exception):
    """A failed attempt; the message is one line a user can act on."""


class TransientError(BackendError):
    """Worth retrying: rate limits, server errors, timeouts, dropped connections."""

    def __init__(self, message: str, retry_after: float | None = None, *,
                 throttled: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.throttled = throttled  # HTTP 429: the server asks for fewer requests
        # Set by a dispatcher when the failure was the endpoint's (it was taken out) and
        # another endpoint can take the request: the attempt is not counted against it.
        self.reroute = False


class ConnectError(TransientError):
    """The server could not be reached at all (refused, unresolvable, unreachable)."""


class PermanentError(BackendError):
    """Retrying cannot help: a bad request, a rejected key, an unknown model."""


class NotFound(PermanentError):
    """HTTP 404 to an API call: the server has no such endpoint (a base URL missing its
    /v1, most often) or no such model. `where` is the URL that answered it."""

    def __init__(self, message: str, where: str):
        super().__init__(message)
        self.where = where


class AuthError(PermanentError):
    """The server refused the key (HTTP 401/403); `key_line` says which key, never its value."""

    def __init__(self, message: str, key_line: str):
        super().__init__(message)
        self.key_line = key_line


class PreflightError(Exception):
    """The run cannot start: unreachable server, missing key, unknown model."""


class Unreachable(PreflightError):
    """No answer at all from the server (one replica of several may be down for a while)."""


class Sender(Protocol):
    """What sends one attempt once a slot is held (a backend, or a dispatcher's lease)."""

    async def complete(self, request: Request) -> Response: ...


class _Direct:
    """The slot of a backend that never waits: the backend itself sends."""

    __slots__ = ("backend",)

    def __init__(self, backend: Backend):
        self.backend = backend

    async def __aenter__(self) -> Sender:
        return self.backend

    async def __aexit__(self, *exc: object) -> None:
        return None


class Backend(ABC):
    """A model behind one async call. Subclasses set `name`."""

    name: str = "backend"
    asks_a_person: bool = False
    """True: a person answers (`--backend human`), so the run sends its samples in a seeded
    random order of the person's own rather than the data's order."""

    def __init__(self, model: str, base_url: str | None = None):
        self.model = model
        self.base_url = base_url
        self.served: dict[str, Any] | None = None
        """What the server said it serves under `model` (a checkpoint, a digest: see
        `backends.served`), learned at preflight; None when it says nothing."""

    def identity(self) -> dict[str, Any]:
        """What identifies the model's answers: part of the cache key and of run.json. What
        the server says it serves when it says so (two servers of one checkpoint share
        answers), else its URL (two unknown servers never do)."""
        if self.served:
            return {"backend": self.name, "model": self.model, "served": self.served}
        return {"backend": self.name, "base_url": self.base_url, "model": self.model}

    async def preflight(self) -> None:  # noqa: B027 - optional hook, nothing to check by default
        """Check the backend can serve the model before any sample is sent."""

    def notice(self) -> str | None:
        """A line the run says once the backend is ready (where a person's page is), or
        None."""
        return None

    def expect(self, requests: int, done: int) -> None:  # noqa: B027 - optional hook
        """The run's number of requests and how many are done already, before it sends
        (a person's page shows its progress from them)."""

    @abstractmethod
    async def complete(self, request: Request) -> Response:
        """One attempt; raise TransientError or PermanentError on failure."""

    def slot(self, request: Request) -> AbstractAsyncContextManager[Sender]:
        """Wait for room to send `request` (a free connection, a rate-limit token) and hold
        it while the sender works. The engine starts an attempt's timeout only once inside,
        so the timeout measures the server, never the queue in front of it."""
        return _Direct(self)

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or worker processes."""

    async def __aenter__(self) -> Backend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class NullBackend(Backend):
    """For runs that need no model (validators only): any request is a permanent error."""

    name = "none"

    def __init__(self) -> None:
        super().__init__(model="none")

    async def complete(self, request: Request) -> Response:
        raise PermanentError("this run has no model backend (give --judge-backend and "
                             "--judge-model for judges)")
