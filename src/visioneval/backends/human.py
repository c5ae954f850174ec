"""`--backend human`: a person answers the run's requests in a browser, one at a time, on a
page this run serves on 127.0.0.1 (`human_page`). The model name is the observer's id.

Every other part of a run is a model's: the benchmark's prompt and parser, the records, the
journal (so closing the tab, or stopping the command, loses nothing and `--resume`
continues), the report and `compare`, and a benchmark's adaptive placement (the Psi method)
choosing each next stimulus from the answers so far. What differs is said by the run
specification (`runs.spec`): one request at a time, no cache (a person is asked anew), no
timeout but the page's own, and the trials in a seeded random order of their own."""

from __future__ import annotations

import asyncio
import re
import time

from visioneval.backends.base import Backend, PreflightError
from visioneval.backends.human_page.server import PageServer
from visioneval.backends.human_page.trial import Desk
from visioneval.core.records import Request, Response
from visioneval.io.local_server import listen_first_free

DEFAULT_PORT = 8780
NEXT_PORTS = 10
FAREWELL_S = 0.5
FAREWELL_STEPS = 50
OBSERVER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class HumanBackend(Backend):
    name = "human"
    asks_a_person = True

    def __init__(self, observer: str, port: int | None = None,
                 farewell_s: float = FAREWELL_S):
        """`farewell_s`: how long the run's end waits for an open page to hear it (and show
        its end screen) before the server stops."""
        super().__init__(model=observer)
        self._port = port
        self._farewell_s = farewell_s
        self._desk = Desk()
        self._server: PageServer | None = None
        self.page_url: str | None = None

    def identity(self) -> dict[str, object]:
        return {"backend": self.name, "model": self.model}

    async def preflight(self) -> None:
        if not OBSERVER.fullmatch(self.model):
            raise PreflightError(f"--model {self.model!r}: an observer id is up to 64 letters, "
                                 "digits, '.', '_' or '-' (P01, say), never a name")
        if self._server is not None:
            return
        try:
            sock = listen_first_free(self._port, DEFAULT_PORT, NEXT_PORTS)
        except ValueError as exc:
            raise PreflightError(str(exc)) from None
        self._server = PageServer(self._desk, self.model)
        await self._server.start(sock)
        self.page_url = f"http://127.0.0.1:{sock.getsockname()[1]}/"

    def notice(self) -> str | None:
        return (f"observer {self.model}: open {self.page_url} in a browser (Ctrl-C stops, "
                "--resume continues)") if self.page_url else None

    def expect(self, requests: int, done: int) -> None:
        self._desk.total = requests
        self._desk.done_before = done

    async def complete(self, request: Request) -> Response:
        started = time.perf_counter()
        answered = await self._desk.ask(request)
        return Response(text=answered.text, finish_reason="stop",
                        latency_s=time.perf_counter() - started, person=answered.person)

    async def aclose(self) -> None:
        self._desk.finish()
        if self._server is not None:
            for _ in range(FAREWELL_STEPS if self._desk.polled else 0):
                if self._desk.farewell_said:  # the page shows its end screen
                    break
                await asyncio.sleep(self._farewell_s / FAREWELL_STEPS)
            await self._server.stop()
            self._server = None
