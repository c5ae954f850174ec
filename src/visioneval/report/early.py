"""The end-of-run page's work that can be done while answers still arrive.

A run spends most of its time waiting for the model: a request phase at 64 in flight keeps
one core busy a tenth of the time. The page drawn after the last answer used to read the
data again for its thumbnails, import its modules and compile its templates then; here the
thumbnails the page will likely show are made from the samples' own bytes as their records
are journaled (in one worker thread: Pillow lets go of the GIL while it decodes, so the
event loop is not held), and the modules the end of the run imports and the page's
templates are loaded in the event loop, one at a time, when no answer has come for a while
(answers sent together come back together; between two waves the loop only waits). An
import holds the GIL throughout: in a thread it would make the loop wait for it at every
answer. Nothing is written: the thumbnails wait in memory (a bounded number, whatever
the run's size) until the page takes them, and a killed run loses nothing but time.

Which images the page shows is known only at the end (`page.browser_data`): the first
`limit` distinct images of the embedded samples, errors first, then unparsed answers, wrong
answers and the rest, each class in journal order. So an image is made while its class and
the classes before it have met fewer than `limit` distinct images: any other can never be
among the first `limit`. The page takes the ones it wants and reads the data only for those
it does not find here (a resumed run's earlier samples, an image too large to decode, a run
of more samples than a page embeds)."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.records import Record, Sample
from visioneval.core.runfiles import RunInfo
from visioneval.report.selection import KINDS, priority
from visioneval.report.thumbs import RUN_END_THUMBS, thumbnail

log = logging.getLogger(__name__)

QUIET_S = 0.02
"""A loading step runs once no answer has come for this long: the wave of answers is in,
and the next is about a model's latency away. A step takes 1-30 ms."""

PENDING_BYTES = 32_000_000
"""The encoded images waiting for their thumbnail hold at most this many bytes (a wave of
64 answers can bring 64 candidates at once); past it an image is left to the page, which
reads it from the data: a slow decoder never holds more than this in memory."""


class EarlyPage:
    """Told of each record as it is journaled (`recorded`); `thumbnails()` once the answers
    are in. `limit`: the thumbnails the end-of-run page embeds."""

    def __init__(self, info: RunInfo, directory: Path, limit: int = RUN_END_THUMBS):
        self.info = info
        self.directory = directory
        self.limit = limit
        self._definition: BenchmarkDefinition | None = None
        self._off = False  # the page will not use them (untrusted run), or a step failed
        # The images met, each under the first class it was met in, and how many per
        # class: at most `limit` a class, whatever the run's size.
        self._class: dict[str, int] = {}
        self._per_class = [0] * len(KINDS)
        self._jobs: dict[str, Future[str]] = {}
        self._pending: dict[Future[str], int] = {}  # waiting: the bytes each holds
        self._pool: ThreadPoolExecutor | None = None
        self._warm: list[Callable[[], object]] | None = None  # loading steps left
        self._last = 0.0  # when the last answer came (the loop's clock)
        self._waiting: asyncio.TimerHandle | None = None  # the next loading step's check

    def recorded(self, sample: Sample, record: Record) -> None:
        """Make the record's query image's thumbnail if the page may show it. Never raises:
        the run does not depend on this."""
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
        self._warm_later()
        images = [part["image"]["sha256"] for message in record.prompt
                  for part in message.get("parts", [])
                  if isinstance(part, dict) and "image" in part]
        if not images:
            return
        sha = images[-1]
        row = definition.browser_row(record)
        row["e"] = record.response.error
        kind = priority(row)
        before = self._class.get(sha)
        if before is not None and before <= kind:
            return  # placed by an earlier answer already
        if sum(self._per_class[:kind + 1]) >= self.limit:
            return  # this class and those before it fill the page already: never shown
        if before is not None:
            self._per_class[before] -= 1
        self._class[sha] = kind
        self._per_class[kind] += 1
        if sha not in self._jobs:
            self._make(sample, sha)

    def _resolve(self) -> BenchmarkDefinition | None:
        """The definition the end-of-run page is drawn with (`page.try_write_report`); a
        run it shows without one has no thumbnails, so none are made."""
        from visioneval.core import registry
        from visioneval.core.rundir import shown_definition

        definition, untrusted = shown_definition(self.info, registry.imported_here(self.info),
                                                 self.directory)
        if untrusted is not None:
            self._off = True
            return None
        self._definition = definition
        return definition

    def _make(self, sample: Sample, sha: str) -> None:
        self._pending = {job: n for job, n in self._pending.items() if not job.done()}
        for message in sample.messages:
            for image in message.images():
                if image.sha256 != sha:
                    continue
                if sum(self._pending.values()) + len(image.data) > PENDING_BYTES:
                    return
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=1,
                                                    thread_name_prefix="early-thumbs")
                job = self._pool.submit(thumbnail, image.data, name=f"sample {sample.id}")
                self._jobs[sha] = job
                self._pending[job] = len(image.data)
                return

    def _stop_warming(self) -> None:
        self._warm = []
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None

    def _warm_later(self) -> None:
        """An answer came: the next loading step waits for the loop to be quiet."""
        if self._warm is None:
            self._warm = warm_up_steps()
        if not self._warm:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # told of records outside a run: nothing to wait for
            self._warm = []
            return
        self._last = loop.time()
        if self._waiting is None:
            self._waiting = loop.call_later(QUIET_S, self._warm_step)

    def _warm_step(self) -> None:
        """One loading step if no answer came for QUIET_S, then the next check."""
        self._waiting = None
        if not self._warm:
            return
        loop = asyncio.get_running_loop()
        quiet = loop.time() - self._last
        if quiet >= QUIET_S:
            try:
                self._warm.pop(0)()
            except Exception as exc:  # the end of the run imports it again, and says so
                log.debug("loading ahead: %s: %s", type(exc).__name__, exc)
        if self._warm:
            self._waiting = loop.call_later(max(QUIET_S - quiet, 0.0), self._warm_step)

    def thumbnails(self) -> Mapping[str, str]:
        """{sha256: data URL} of the thumbnails made, once the ones under way are done.
        An image that failed to decode is left out (the page reads it again and says why)."""
        self._stop_warming()  # what is not loaded yet is loaded when it is used
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        made = {}
        for sha, job in self._jobs.items():
            if job.exception() is None:
                made[sha] = job.result()
        return made

    def close(self) -> None:
        """The run ended without a page (Ctrl-C, an error): drop what waits."""
        self._stop_warming()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def warm_up_steps() -> list[Callable[[], object]]:
    """What the end of the run imports (the intervals' numpy modules, the page's modules) and
    the page's templates compiled, one step each, so that after the last answer only the
    computing and the drawing are left."""
    modules = ("numpy.random",  # the bootstrap's resamples
               "numpy.ma",  # loaded by numpy on first use: by the intervals' percentiles
               "jinja2", "visioneval.report.templating", "visioneval.report.charts",
               "visioneval.report.page")

    def compile_template(name: str) -> Callable[[], object]:
        def step() -> object:
            from visioneval.report import templating

            return templating.environment().get_template(name)
        return step

    return [*(lambda m=m: importlib.import_module(m) for m in modules),
            *(compile_template(name) for name in ("base.html", "run.html", "sections.html",
                                                  "blocks.html", "chart.svg"))]
