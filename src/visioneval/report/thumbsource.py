"""Thumbnails on demand for `visioneval view`, read from the run's dataset.

Records keep an image's sha256, not its bytes, and a benchmark's samples can only be read
in order; so one reader walks the dataset forward, making the thumbnails that pages have
asked for as it meets their images, and keeps the recent ones. Browsing page after page
in journal order (which follows the dataset's order) therefore reads the data about once;
an image behind the reader costs at most one more pass. An image absent from the data
after a whole pass is remembered as missing."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.records import Sample, SkippedRow
from visioneval.core.runfiles import RunInfo
from visioneval.io.images import ImageError
from visioneval.report.thumbs import webp

log = logging.getLogger(__name__)


class ThumbSource:
    def __init__(self, definition: BenchmarkDefinition | None, info: RunInfo,
                 known: set[str], keep: int = 4096):
        """`definition`: the run's trusted one (`OpenedRun.shown`), which reads its data;
        None: the run is shown without one, so there are no thumbnails."""
        self.definition = definition
        self.info = info
        self.known = known  # the images the journal names; anything else is unknown
        self.keep = keep
        self.problem: str | None = None  # why the data cannot be read, once tried
        self.refused: dict[str, str] = {}  # images too big to decode: {sha256: why}
        self.changed: str | None = None  # the data changed since the run (`datacheck`)
        if definition is None:
            self.problem = "the run's benchmark definition is not named (--definition)"
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._missing: set[str] = set()
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._reader: Iterator[Sample | SkippedRow] | None = None

    def want(self, shas: Iterable[str | None]) -> None:
        """Ask for these thumbnails (a page's worth), to be made by the next pass."""
        self._pending.update(s for s in shas if s in self.known and s not in self._cache
                             and s not in self._missing)

    def get(self, sha: str) -> bytes | None:
        """The WebP thumbnail of an image the journal names; None if it is unknown, or not
        (or no longer) in the data."""
        if sha not in self.known or sha in self._missing:
            return None
        self.want([sha])
        with self._lock:
            if sha not in self._cache and sha in self._pending:
                self._fill()
            thumb = self._cache.get(sha)
            if thumb is not None:
                self._cache.move_to_end(sha)
            return thumb

    def fill(self) -> None:
        """Make every thumbnail asked for so far (a page's prefetch, in a worker thread)."""
        with self._lock:
            self._fill()

    def _fill(self) -> None:
        covering: set[str] | None = None  # pending when the current full pass started
        while self._pending and self.problem is None:
            if self._reader is None:
                if covering is not None:  # a whole pass did not find these
                    self._missing |= covering & self._pending
                    self._pending -= covering
                    covering = None
                    continue
                self._reader = self._open()
                covering = set(self._pending)
                if self._reader is None:
                    return
            item = next(self._reader, None)
            if item is None:
                self._reader = None
                continue
            for message in getattr(item, "messages", ()):
                for image in message.images():
                    if image.sha256 in self._pending:
                        self._store(image.sha256, image.data,
                                    f"sample {getattr(item, 'id', '?')}")

    def _open(self) -> Iterator[Sample | SkippedRow] | None:
        if self.definition is None:
            return None
        try:
            options = dict(self.info.options)
            return iter(self.definition.build_to_read(options).samples())
        except Exception as exc:  # data moved or offline: pages work without pictures
            self.problem = f"the run's data cannot be read ({exc})"
            log.warning("no thumbnails: %s", self.problem)
            return None

    def _store(self, sha: str, data: bytes, name: str) -> None:
        self._pending.discard(sha)
        try:
            self._cache[sha] = webp(data, name=name)
        except ImageError as exc:  # beyond the pixels decoded: said once, then a 404
            log.warning("no thumbnail for %s", exc)
            self.refused[sha] = f"no thumbnail for {exc}"
            self._missing.add(sha)
            return
        except OSError as exc:
            log.debug("thumbnail of %s failed: %s", sha[:12], exc)
            self._missing.add(sha)
            return
        while len(self._cache) > self.keep:
            self._cache.popitem(last=False)
