"""`visioneval view RUN_DIR`: every sample of a run, paged, filtered and with thumbnails,
from a small HTTP server on 127.0.0.1.

The page is the run's report (same template, tables and charts) whose sample browser asks
this server for each page of rows instead of carrying them: the journal is indexed once
(`journal_index`) and read back by offset, thumbnails are made on demand from the dataset
(`thumbsource`). Nothing is written to the run directory.

Only requests naming the server itself in their Host header (127.0.0.1, localhost or [::1]
with the served port) are answered: a web page whose own name has been re-pointed at
127.0.0.1 (DNS rebinding) sends its own name there, and gets 403 instead of the run."""

from __future__ import annotations

import asyncio
import socket
from array import array
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from visioneval.core import registry
from visioneval.core.rundir import load
from visioneval.io.local_server import listen_first_free, served_app
from visioneval.report.browser_rows import complete_row
from visioneval.report.journal_index import JournalIndex
from visioneval.report.page import definition_of, render_page
from visioneval.report.thumbsource import ThumbSource

PAGE_MAX = 500


@dataclass
class Viewer:
    directory: Path
    page: str
    index: JournalIndex
    to_row: Callable[..., dict[str, Any]]
    thumbs: ThumbSource
    untrusted: str | None = None
    """Why the run is shown with the generic definition (`OpenedRun.untrusted`), or None."""
    data_change: str | None = None
    """The line saying the run's data changed since it ran (`OpenedRun.data_change`), or None."""
    _last: tuple[tuple[str, ...], array] | None = field(default=None)

    @classmethod
    def open(cls, directory: Path, definition_named: registry.Named = None,
             home: str | None = None) -> Viewer:
        """`definition_named`: the definition the user named for the run (`--definition`);
        without it a run of a user's own benchmark is shown with the generic one. `home`:
        the list of runs the page links back to (`report.home`), if any."""
        view = load(directory, definition_named)
        definition = definition_of(view)
        index = JournalIndex.build(directory, definition.browser_row)
        data = {"views": list(index.outcomes), "groups": sorted(index.group_ids),
                "labels": sorted(index.label_ids), "texts": [], "thumbs": {}, "rows": [],
                "total": len(index), "server": "api/rows"}
        note = (f"All {len(index)} samples of the run, served by `visioneval view` from "
                f"{directory / 'samples.jsonl'}; each answer in full at api/record/ID.")
        changed = view.data_change
        if changed is not None:
            note += (f" {changed[0].upper()}{changed[1:]}: an image that is not in it now "
                     "has no thumbnail.")
        page = render_page(view, definition, data, note, home)
        known = {sha for sha in index.images if sha is not None}
        thumbs = ThumbSource(None if view.untrusted else definition, view.info, known)
        thumbs.changed = changed
        return cls(directory, page, index, definition.browser_row, thumbs, view.untrusted,
                   changed)

    def matching(self, group: str, label: str, view: str, outcome: str, text: str) -> array:
        """The slots a filter keeps (the last filter's answer is kept: paging is free)."""
        key = (group, label, view, outcome, text)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        slots = self.index.select(group, label, view, outcome)
        if text:
            slots = self.index.search(slots, text, self.to_row)
        found = array("q", slots)
        self._last = (key, found)
        return found

    def rows(self, query: dict[str, str]) -> dict[str, Any]:
        """One page of rows in the page script's shape, with its texts and thumbnail URLs."""
        size = min(max(_int(query.get("size"), 50), 1), PAGE_MAX)
        found = self.matching(query.get("group", ""), query.get("label", ""),
                              query.get("view", ""), query.get("outcome", ""),
                              query.get("q", "").strip().lower())
        pages = max(1, -(-len(found) // size))
        page = min(max(_int(query.get("page"), 0), 0), pages - 1)
        texts: dict[str, int] = {}
        thumbs: dict[str, str] = {}
        rows = []
        for slot in found[page * size:(page + 1) * size]:
            record = self.index.read(slot)
            row = complete_row(record, self.to_row(record))
            row["p"] = texts.setdefault(row["p"], len(texts))
            if row["img"]:
                thumbs[row["img"]] = f"thumb/{row['img']}"
            rows.append(row)
        self.thumbs.want(thumbs)
        return {"rows": rows, "texts": list(texts), "thumbs": thumbs, "page": page,
                "matched": len(found), "total": len(self.index)}

    def app(self, port: int) -> web.Application:
        """The routes, behind the Host check for a server on 127.0.0.1:`port`."""
        return served_app(port, [(f"/{path}", partial(respond, self))
                                 for path, respond in BROWSER_ROUTES])

    async def page_response(self, request: web.Request) -> web.Response:
        return web.Response(text=self.page, content_type="text/html")

    async def rows_response(self, request: web.Request) -> web.Response:
        answer = await asyncio.to_thread(self.rows, dict(request.query))
        if answer["thumbs"]:  # start on the page's pictures before the browser asks
            asyncio.get_running_loop().run_in_executor(None, self.thumbs.fill)
        return web.json_response(answer)

    async def record_response(self, request: web.Request) -> web.Response:
        slot = self.index.slot.get(request.match_info["sample_id"])
        if slot is None:
            raise web.HTTPNotFound(text="no such sample in this run")
        record = await asyncio.to_thread(self.index.read, slot)
        return web.Response(text=record.model_dump_json(), content_type="application/json")

    async def thumb_response(self, request: web.Request) -> web.Response:
        sha = request.match_info["sha"]
        thumb = await asyncio.to_thread(self.thumbs.get, sha)
        if thumb is None:
            reason = (self.thumbs.refused.get(sha) or self.thumbs.problem
                      or (f"not in the run's data now: {self.thumbs.changed}"
                          if self.thumbs.changed else None)
                      or "no such image in this run or its data")
            raise web.HTTPNotFound(text=reason)
        return web.Response(body=thumb, content_type="image/webp",
                            headers={"Cache-Control": "max-age=3600"})


Respond = Callable[[Viewer, web.Request], Awaitable[web.StreamResponse]]
BROWSER_ROUTES: tuple[tuple[str, Respond], ...] = (
    ("", Viewer.page_response),
    ("api/rows", Viewer.rows_response),
    ("api/record/{sample_id:.+}", Viewer.record_response),
    ("thumb/{sha}", Viewer.thumb_response),
)
"""A run browser's paths, relative to where it is served (`/` for one run, `/run/KEY/` in a
folder's), each with the viewer's answer."""


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


DEFAULT_PORT = 8766
NEXT_PORTS = 10
"""Without --port, `view` takes 8766 or, when another view (or anything) holds it, the next
free one of the ten after it, so a second view in another terminal just works."""


def listen_on(port: int | None) -> socket.socket:
    """`listen` on the port given; without one, on `DEFAULT_PORT` or the first free port
    after it (the URL printed says which)."""
    return listen_first_free(port, DEFAULT_PORT, NEXT_PORTS)


class Served(Protocol):
    """What `serve` serves: its routes for a server on 127.0.0.1:port (a run's `Viewer`, or
    the runs under a folder, `report.home.Home`)."""

    def app(self, port: int) -> web.Application: ...


async def serve(served: Served, sock: socket.socket, ready: Callable[[str], None]) -> None:
    """Serve on the bound socket (`listen`) until cancelled; `ready` gets the page's URL
    (port 0: any free port, the one taken is in the URL)."""
    port = sock.getsockname()[1]
    runner = web.AppRunner(served.app(port), access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        ready(f"http://127.0.0.1:{port}/")
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
