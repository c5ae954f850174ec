"""`visioneval view`: every sample of a run in a local page served on 127.0.0.1 until
Ctrl-C; given a folder of runs, the list of its runs first, each linking its samples."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from visioneval.commands.common import consoles, guarded, named_definition, warn_untrusted
from visioneval.core.store import RUN_FILE, SAMPLES_FILE
from visioneval.report.home import Home
from visioneval.report.viewer import Served, Viewer, listen_on, serve
from visioneval.terminal import line


def view(run_dir: Path, port: int | None, definition: str | None) -> int:
    """Index the run (or list the runs), serve the page until Ctrl-C; exit 0, or 2 with one
    line (a taken port is said before the run is indexed)."""
    console, err = consoles()

    def action() -> int:
        with listen_on(port) as sock:  # a taken port is said before the run is indexed
            started = time.perf_counter()
            served: Served
            if _holds_runs(run_dir):
                home = Home(run_dir, named_definition(definition))
                found = home.listing()
                line(console, f"found {len(found)} run{'s' if len(found) != 1 else ''} under "
                              f"{run_dir} in {time.perf_counter() - started:.1f} s")
                served = home
            else:
                viewer = Viewer.open(run_dir, named_definition(definition))
                warn_untrusted(err, [viewer.untrusted, viewer.data_change])
                line(console, f"indexed {len(viewer.index)} samples in "
                              f"{time.perf_counter() - started:.1f} s")
                served = viewer

            def ready(url: str) -> None:
                line(console, f"serving {url} (Ctrl-C to stop)")

            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a user stops it
                asyncio.run(serve(served, sock, ready))
        return 0

    return guarded(err, action)


def _holds_runs(folder: Path) -> bool:
    """Whether `view` shows the runs under `folder` rather than one run: a folder that is
    not itself a run directory (no run.json, no journal). A path that is not a folder is
    said by the one-run path, as before."""
    if not folder.is_dir():
        if folder == Path("results"):
            raise FileNotFoundError("no results/ folder here: name a run directory or a "
                                    "folder of runs")
        return False
    return not ((folder / RUN_FILE).exists() or (folder / SAMPLES_FILE).exists())
