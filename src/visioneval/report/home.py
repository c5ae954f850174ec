"""`visioneval view` over a folder of runs: the runs index (runs.html's page, read again at
every visit so a running run's status is current) at `/`, and each run's sample browser at
`/run/KEY/` (KEY: a digest of its folder under the listed one), opened on its first visit
and served as `visioneval view RUN_DIR` serves one run. Only folders the last listing found
are served, behind the same Host check."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Handler

from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.io.local_server import served_app
from visioneval.report import runlist_page
from visioneval.report.runlist import RunEntry, entries
from visioneval.report.viewer import BROWSER_ROUTES, Respond, Viewer

OPEN_RUNS = 8
"""Runs whose browser stays open (their journal index and thumbnails); older ones close."""


def key(entry: RunEntry) -> str:
    """A run's part of the URL: a digest of its folder under the listed one."""
    return hashlib.sha256(entry.relative.encode()).hexdigest()[:12]


class Home:
    def __init__(self, folder: Path, named: BenchmarkDefinition | None = None):
        """`named`: the definition the user named (`--definition`), trusted for the runs
        of its benchmark."""
        self.folder = folder
        self.named = named
        self.runs: dict[str, RunEntry] = {}
        self._open: OrderedDict[str, Viewer] = OrderedDict()
        self._opening: dict[str, asyncio.Lock] = {}

    def listing(self) -> list[RunEntry]:
        """The runs under the folder now; the ones a browser can open are remembered."""
        found = entries(self.folder, self.named)
        self.runs = {key(e): e for e in found if e.status.kind != "broken"}
        return found

    def page(self) -> str:
        found = self.listing()
        return runlist_page.render(found, self.folder, self._link,
                                   subtitle=f"{self.folder.resolve()} · served by visioneval "
                                            "view: each run opens its sample browser")

    def _link(self, entry: RunEntry) -> str | None:
        return f"run/{key(entry)}/" if entry.status.kind != "broken" else None

    def app(self, port: int) -> web.Application:
        """The routes, behind the Host check for a server on 127.0.0.1:`port`."""
        return served_app(port, [("/", self._home), ("/run/{key}", self._slash),
                                 *[(f"/run/{{key}}/{path}", self._in_run(respond))
                                   for path, respond in BROWSER_ROUTES]])

    async def _home(self, request: web.Request) -> web.Response:
        return web.Response(text=await asyncio.to_thread(self.page), content_type="text/html")

    async def _slash(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(f"/run/{request.match_info['key']}/")  # the page's URLs are relative

    async def viewer(self, run: str) -> Viewer:
        """The run's browser, opened (its journal indexed) on its first visit; a folder the
        listing has not found is 404, a run that cannot be read 409 with the one line."""
        found = self._open.get(run)
        if found is not None:
            self._open.move_to_end(run)
            return found
        if run not in self.runs:
            await asyncio.to_thread(self.listing)  # a run started since the page was drawn
        entry = self.runs.get(run)
        if entry is None:
            raise web.HTTPNotFound(text="no such run under this folder (reload the list)")
        named = self.named if self.named is not None and \
            self.named.name == entry.benchmark else None
        async with self._opening.setdefault(run, asyncio.Lock()):
            if run not in self._open:
                try:
                    opened = await asyncio.to_thread(Viewer.open, entry.directory, named,
                                                     "../../")
                except Exception as exc:  # noqa: BLE001 - one line to the page, never a trace
                    raise web.HTTPConflict(text=f"{entry.directory}: {exc}") from None
                self._open[run] = opened
                while len(self._open) > OPEN_RUNS:
                    self._open.popitem(last=False)
        return self._open[run]

    def _in_run(self, respond: Respond) -> Handler:
        """`respond`, answered by the browser of the run the URL's KEY names."""
        async def handler(request: web.Request) -> web.StreamResponse:
            return await respond(await self.viewer(request.match_info["key"]), request)

        return handler
