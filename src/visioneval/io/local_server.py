"""A small HTTP server on 127.0.0.1 for a page a person opens (`visioneval view`, a person's
trials with `--backend human`): the socket bound before anything else is done, so a taken port
is one line, and only requests naming the server itself in their Host header are answered. A
web page whose own name has been re-pointed at 127.0.0.1 (DNS rebinding) sends its own name
there and gets 403."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware


def served_app(port: int, routes: Iterable[tuple[str, Handler]],
               posts: Iterable[tuple[str, Handler]] = ()) -> web.Application:
    """`routes` (path, GET handler), `posts` (path, POST handler) and a quiet /favicon.ico,
    behind the Host check for a server on 127.0.0.1:`port`."""
    app = web.Application(middlewares=[host_check(served_hosts(port))])
    for path, handler in routes:
        app.router.add_get(path, handler)
    for path, handler in posts:
        app.router.add_post(path, handler)
    app.router.add_get("/favicon.ico", no_icon)
    return app


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)  # a browser asks; a 404 would be logged as an error


def served_hosts(port: int) -> frozenset[str]:
    """The Host header values a browser sends to this server: the loopback names with the
    port (and without it on port 80, which browsers leave out)."""
    names = ("127.0.0.1", "localhost", "[::1]")
    return frozenset({f"{n}:{port}" for n in names} | (set(names) if port == 80 else set()))


def host_check(allowed: frozenset[str]) -> Middleware:
    """Middleware answering 403 to a request whose Host header is not one of `allowed`."""
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "").strip().lower()
        if host not in allowed:
            raise web.HTTPForbidden(text="this server answers requests to 127.0.0.1, "
                                         "localhost or [::1] with its port only")
        return await handler(request)

    return check


PORT_RANGE = "a port is a number from 0 to 65535 (0: any free port)"


def listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1:`port`; a port out of range or taken is one ValueError
    line naming it."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port}: {PORT_RANGE}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        why = ("address already in use (choose another --port, or 0 for any free port)"
               if exc.errno == errno.EADDRINUSE else
               "permission denied (ports below 1024 need privileges; choose another --port)"
               if exc.errno == errno.EACCES else exc.strerror or str(exc))
        raise ValueError(f"cannot listen on 127.0.0.1:{port}: {why}") from None
    return sock


def listen_first_free(port: int | None, first: int, tries: int) -> socket.socket:
    """`listen` on the port given; without one, on `first` or the first free port of the
    `tries` after it (the URL printed says which), so a second page in another terminal
    just works."""
    if port is not None:
        return listen(port)
    for candidate in range(first, first + tries):
        try:
            return listen(candidate)
        except ValueError:
            continue
    return listen(first)  # every one taken: the first one's line says why
