"""The end-of-run page's work that can be done while answers still arrive.

A run spends most of its time waiting for the model: a request phase at 64 in flight keeps
one core busy a tenth of the time. The page drawn after the last answer used to read the
data again for its thumbnails, import its modules and compile its templates then; here the
thumbnails the page will likely show are made from the samples' own bytes as their records
are journaled, and the modules the end of the run imports and the page's templates are
loaded, both when no answer has come for a while (`engine.quiet`: answers sent together
come back together; between two waves the loop only waits). The thumbnails are made in
one worker thread (Pillow lets go of the GIL while it decodes, so the event loop is not
held); the loading is done in the event loop, one step at a time (an import holds the GIL
throughout: in a thread it would make the loop wait for it at every answer). Nothing is
written: the thumbnails and the images kept for them wait in memory (a bounded number,
whatever the run's size) until the page takes them, and a killed run loses nothing but
time. The page's sample browser rows are read with the run's metrics, by the thread that
reads its journal while answers arrive (`browser_rows.LiveRows`, `visioneval.runs.live_summary`).

Which images the page shows is known only at the end (`page.browser_data`): the first
`limit` distinct images of the embedded samples, errors first, then unparsed answers, wrong
answers and the rest, each class in journal order. So an image is a candidate while its
class and the classes before it have met fewer than `limit` distinct images: any other can
never be among the first `limit`. The page takes the ones it shows, makes those still kept
as images, and reads the data only for the rest (a resumed run's earlier samples, an image
too large to decode, a run of more samples than a page embeds)."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from visioneval.core import registry
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.records import Record, Sample
from visioneval.core.rundir import image_hashes, shown_definition
from visioneval.core.runfiles import RunInfo
from visioneval.engine.quiet import QuietMoments
from visioneval.report import svgtemplate, templating
from visioneval.report.browser_rows import BrowserRows, LiveRows
from visioneval.report.selection import KINDS, priority
from visioneval.report.thumbs import RUN_END_THUMBS, thumbnail
from visioneval.stats.bootstrap import blas_libraries

log = logging.getLogger(__name__)

KEPT_BYTES = 32_000_000
"""The encoded images kept for a thumbnail not made yet hold at most this many bytes; past
it an image is left to the page, which reads it from the data."""


class EarlyPage:
    """Told of each record as it is journaled (`recorded`); `thumbnails()` once the answers
    are in. `limit`: the thumbnails the end-of-run page embeds.

    A candidate's encoded image is kept (the sample's own bytes, no copy) and its thumbnail
    made by one worker thread once the loop is quiet: a run that keeps the cores busy (a
    model that answers at once) is never quiet, and its page makes the thumbnails it shows
    from the kept images instead, in threads, none of them in vain."""

    def __init__(self, info: RunInfo, directory: Path, limit: int = RUN_END_THUMBS):
        self.info = info
        self.directory = directory
        self.limit = limit
        self._definition: BenchmarkDefinition | None = None
        self._off = False  # the page will not use them (untrusted run), or a step failed
        # The images met, each at its place in the page's order (its class, then when it
        # was met in it), and how many per class: at most `limit` a class.
        self._place: dict[str, tuple[int, int]] = {}
        self._per_class = [0] * len(KINDS)
        self._met = 0
        self._kept: dict[str, bytes] = {}  # candidates not handed to the worker yet
        self._jobs: dict[str, Future[str]] = {}
        self._working: dict[str, bytes] = {}  # handed to the worker, not done
        self._pool: ThreadPoolExecutor | None = None
        self._warm: list[Callable[[], object]] | None = None  # loading steps left
        self._quiet = QuietMoments(self._step)  # a loading step takes 1-30 ms
        self._rows = LiveRows(info, directory)

    def recorded(self, sample: Sample, record: Record) -> None:
        """Keep the record's query image if the page may show it. Never raises: the run
        does not depend on this."""
        if self._off:
            return
        try:
            self._see(sample, record)
        except Exception as exc:  # the page reads the data instead, as it always could
            log.debug("thumbnails during the run stopped: %s: %s", type(exc).__name__, exc)
            self._off = True

    def _see(self, sample: Sample, record: Record) -> None:
        definition = self._definition or self._resolve()
        if definition is None:
            return
        self._quiet.answered()
        images = image_hashes(record)
        if not images:
            return
        sha = images[-1]
        row = definition.browser_row(record)
        row["e"] = record.response.error
        kind = priority(row)
        before = self._place.get(sha)
        if before is not None and before[0] <= kind:
            return  # placed by an earlier answer already
        if sum(self._per_class[:kind + 1]) >= self.limit:
            return  # this class and those before it fill the page already: never shown
        if before is not None:
            self._per_class[before[0]] -= 1
        self._place[sha] = (kind, self._met)
        self._met += 1
        self._per_class[kind] += 1
        if sha not in self._kept and sha not in self._jobs:
            self._keep(sample, sha)

    def _resolve(self) -> BenchmarkDefinition | None:
        """The definition the end-of-run page is drawn with (`page.try_write_report`); a
        run it shows without one has no thumbnails, so none are made."""
        definition, untrusted = shown_definition(self.info, registry.imported_here(self.info),
                                                 self.directory)
        if untrusted is not None:
            self._off = True
            return None
        self._definition = definition
        return definition

    def _keep(self, sample: Sample, sha: str) -> None:
        self._working = {s: data for s, data in self._working.items()
                         if not self._jobs[s].done()}
        held = sum(map(len, self._kept.values())) + sum(map(len, self._working.values()))
        for message in sample.messages:
            for image in message.images():
                if image.sha256 == sha:
                    if held + len(image.data) <= KEPT_BYTES:
                        self._kept[sha] = image.data
                    return

    def _step(self) -> bool:
        """The loop is quiet: the kept images to the worker, and one loading step; whether
        anything waits still."""
        self._hand_over()
        self._load_one()
        return bool(self._kept) or self._warm is None or bool(self._warm)

    def _hand_over(self) -> None:
        """The kept images among the first `limit` of the page's order so far to the worker;
        those pushed out of it since they came are let go (and their thumbnails, if not
        started): an image behind `limit` others only falls further back, unless an answer
        of an earlier class shows it again, which keeps it anew."""
        if not self._kept and not self._working:
            return
        first = set(sorted(self._place, key=self._place.__getitem__)[:self.limit])
        for sha in [s for s in self._working if s not in first]:
            if self._jobs[sha].cancel():
                del self._jobs[sha], self._working[sha]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="early-thumbs")
        for sha, data in self._kept.items():
            if sha in first:
                self._jobs[sha] = self._pool.submit(thumbnail, data)
                self._working[sha] = data
        self._kept = {}

    def _load_one(self) -> None:
        if self._warm is None:
            self._warm = warm_up_steps()
        if self._warm:
            try:
                self._warm.pop(0)()
            except Exception as exc:  # the end of the run imports it again, and says so
                log.debug("loading ahead: %s: %s", type(exc).__name__, exc)

    def _stop(self) -> None:
        self._warm = []
        self._quiet.stop()

    def thumbnails(self) -> Mapping[str, str | bytes]:
        """{sha256: the thumbnail's data URL, or the encoded image to make it from if the
        page shows it}, once the thumbnail being made is done (those the worker has not
        started are handed back as images: the page makes the ones it shows, in threads).
        An image that failed to decode is left out: the page reads it again and says why."""
        self._stop()  # what is not loaded yet is loaded when it is used
        ready: dict[str, str | bytes] = dict(self._kept)
        for sha, job in self._jobs.items():
            if job.cancel():
                ready[sha] = self._working[sha]
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for sha, job in self._jobs.items():
            if not job.cancelled() and job.exception() is None:
                ready[sha] = job.result()
        return ready

    def readers(self) -> list[LiveRows]:
        """What reads the journal's records with the run's metrics, while answers arrive
        (`visioneval.runs.live_summary`): the page's browser rows."""
        return [self._rows]

    def rows(self) -> BrowserRows | None:
        """The page's browser rows of every record, once the run has ended; None if they
        were not read with its metrics (the page reads the journal for them)."""
        return self._rows.rows()

    def close(self) -> None:
        """The run ended without a page (Ctrl-C, an error): drop what waits."""
        self._stop()
        self._kept = {}
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def warm_up_steps() -> list[Callable[[], object]]:
    """What the end of the run imports (the intervals' numpy modules, the page's modules),
    numpy's BLAS libraries found, and the page's templates compiled, one step each, so
    that after the last answer only the computing and the drawing are left."""
    modules = ("numpy.random",  # the bootstrap's resamples
               "numpy.ma",  # loaded by numpy on first use: by the intervals' percentiles
               "jinja2", "visioneval.report.templating", "visioneval.report.charts",
               "visioneval.report.page")

    def compile_template(name: str) -> Callable[[], object]:
        def step() -> object:
            return templating.environment().get_template(name)
        return step

    def find_blas() -> object:  # the intervals hold numpy's BLAS to one thread

        return blas_libraries()

    def compile_chart_template() -> object:
        return svgtemplate.chart_template()

    return [*(lambda m=m: importlib.import_module(m) for m in modules), find_blas,
            *(compile_template(name) for name in ("base.html", "run.html", "sections.html",
                                                  "blocks.html")), compile_chart_template]
