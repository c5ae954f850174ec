"""The page's server on 127.0.0.1 (`io.local_server`: the Host check, the port bound before
the run starts): the page, the waiting trial (`/next`, answered within `trial.POLL_S`), its
images as their stored bytes (never re-encoded, never cached by the browser), and the
person's answer (`/answer`, a small JSON body checked field by field)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from visioneval.backends.human_page.trial import Answered, Desk
from visioneval.core.person import MAX_AGENT, Display, PersonAnswer, Procedure
from visioneval.io.local_server import served_app
from visioneval.pages import environment

HERE = Path(__file__).parent
MAX_ANSWER_BYTES = 16_384  # an answer's JSON: a few hundred bytes
MAX_TEXT = 2_000  # characters of a typed answer kept


class Posted(BaseModel):
    """What the page sends with an answer."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(max_length=32)
    answer: str = Field(max_length=MAX_TEXT)
    response_ms: float = Field(ge=0, le=86_400_000)
    timed_out: bool = False
    procedure: Procedure
    display: Display


def page(observer: str) -> str:
    """The page, made once per run: the observer's id, what is recorded, and the script."""
    env = environment(HERE / "templates")
    return env.get_template("human.html").render(
        title=f"visioneval: observer {observer}", subtitle="your answers stay on this machine",
        observer=observer, css=(HERE / "assets" / "human.css").read_text(),
        script=(HERE / "assets" / "human.js").read_text(), defaults=Procedure(),
        max_agent=MAX_AGENT)


class PageServer:
    """The routes over one `Desk`, for a run whose person is `observer`."""

    def __init__(self, desk: Desk, observer: str):
        self.desk = desk
        self.observer = observer
        self._page = page(observer)
        self._runner: web.AppRunner | None = None

    async def start(self, sock: socket.socket) -> None:
        port = sock.getsockname()[1]
        app = served_app(port, [("/", self._index), ("/next", self._next),
                                ("/image/{key}/{index}", self._image)],
                         posts=[("/answer", self._answer)])
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(text=self._page, content_type="text/html",
                            headers={"Cache-Control": "no-store"})

    async def _next(self, request: web.Request) -> web.Response:
        shown = await self.desk.next()
        body: dict[str, Any]
        if shown is None:
            body = {"done": True} if self.desk.finished else {"waiting": True}
            self.desk.farewell_said = self.desk.farewell_said or self.desk.finished
        else:
            body = {"trial": shown.page_data(self.desk.number, self.desk.total)}
        return web.Response(body=orjson.dumps(body), content_type="application/json",
                            headers={"Cache-Control": "no-store"})

    async def _image(self, request: web.Request) -> web.Response:
        try:
            index = int(request.match_info["index"])
        except ValueError:
            raise web.HTTPNotFound() from None
        found = self.desk.image(request.match_info["key"], index)
        if found is None:
            raise web.HTTPNotFound(text="no such image is waiting")
        return web.Response(body=found.data, content_type=found.mime,
                            headers={"Cache-Control": "no-store"})

    async def _answer(self, request: web.Request) -> web.Response:
        raw = await request.content.read(MAX_ANSWER_BYTES + 1)
        if len(raw) > MAX_ANSWER_BYTES:
            return _refused(413, f"an answer is at most {MAX_ANSWER_BYTES} bytes of JSON")
        try:
            posted = Posted.model_validate_json(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _refused(400, f"answer field {where}: {first['msg']}")
        person = PersonAnswer(observer=self.observer, response_ms=posted.response_ms,
                              timed_out=posted.timed_out, trial=self.desk.number,
                              procedure=posted.procedure, display=posted.display)
        shown = await self.desk.next(0)
        text = shown.answer_text(posted.answer) if shown and shown.key == posted.key \
            else posted.answer
        why = self.desk.answer(posted.key, Answered(text, person))
        if why is not None:
            return _refused(409, why)
        return web.Response(body=orjson.dumps({"ok": True}), content_type="application/json")


def _refused(status: int, reason: str) -> web.Response:
    return web.Response(status=status, body=orjson.dumps({"error": reason}),
                        content_type="application/json")
