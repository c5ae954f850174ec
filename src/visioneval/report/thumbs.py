"""Thumbnails for the sample browser, made from the run's own data source.

Records keep an image's sha256, not its bytes; the benchmark is rebuilt from run.json and
its samples are read until every wanted image is found. Each distinct image becomes one small
WebP data URL, shared by all the samples that show it. Decoding happens here, at report
time, or beside the run in a worker thread (`report.early`), never on the evaluation's hot
path."""

from __future__ import annotations

import base64
import io
import logging
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from PIL import Image as PILImage

from visioneval.io.images import ImageError, open_to_decode

if TYPE_CHECKING:
    from visioneval.core.rundir import OpenedRun

log = logging.getLogger(__name__)
SIDE = 96
RUN_END_THUMBS = 100  # the end-of-run page's (`visioneval report` makes up to 1000)


def webp(data: bytes, side: int = SIDE, name: str = "") -> bytes:
    """A small WebP of an encoded image, made as cheaply as Pillow allows: a JPEG is decoded
    at a reduced scale (`draft`), any image is shrunk by an integer factor (`reduce`, a box
    filter) before the final bilinear resize, and the WebP is encoded at the fastest method.
    About 1.2 ms for a 384-pixel PNG here, against 1.6 ms for a plain `thumbnail`. An image
    beyond `images.MAX_DECODE_PIXELS` raises TooManyPixels (naming `name`) undecoded."""
    with open_to_decode(data, name) as im:
        im.draft("RGB", (side, side))  # JPEG only: decode at 1/2, 1/4 or 1/8 scale
        small = im if im.mode in ("RGB", "L") else im.convert("RGB")
        factor = min(small.width, small.height) // side
        if factor > 1:
            small = small.reduce(factor)
        small.thumbnail((side, side), PILImage.Resampling.BILINEAR, reducing_gap=None)
        buf = io.BytesIO()
        small.save(buf, format="WEBP", quality=60, method=0)
    return buf.getvalue()


def thumbnail(data: bytes, side: int = SIDE, name: str = "") -> str:
    """`webp` as a data URL, for a page that must hold its pictures."""
    return "data:image/webp;base64," + base64.b64encode(webp(data, side, name)).decode()


def workers() -> int:
    """Threads that decode thumbnails: Pillow lets go of the GIL while it decodes, resizes
    and encodes, so they run on the cores the finished run leaves idle."""
    return min(4, os.cpu_count() or 1)


def _made(samples: Iterable[Any], wanted: set[str]) -> dict[str, tuple[str, Future[str]]]:
    """{sha256: (sample name, its thumbnail being made)} for the wanted images, in the order
    the data holds them. The data is read in this thread and stops as soon as every wanted
    image was met; at most a few images per worker wait in memory to be decoded."""
    jobs: dict[str, tuple[str, Future[str]]] = {}
    waiting: set[Future[str]] = set()
    with ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="thumbs") as pool:
        for item in samples:
            for message in getattr(item, "messages", ()):
                for image in message.images():
                    if image.sha256 not in wanted or image.sha256 in jobs:
                        continue
                    name = f"sample {getattr(item, 'id', '?')}"
                    job = pool.submit(thumbnail, image.data, name=name)
                    jobs[image.sha256] = (name, job)
                    waiting.add(job)
                    if len(waiting) >= 4 * workers():
                        waiting = wait(waiting, return_when=FIRST_COMPLETED).not_done
            if len(jobs) >= len(wanted):
                break
    return jobs


def _made_from(images: Mapping[str, bytes]) -> dict[str, str]:
    """Thumbnails of encoded images, in threads; one that fails is left out (the data is
    read for it, and its warning names its sample)."""
    if not images:
        return {}
    made: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="thumbs") as pool:
        jobs = {sha: pool.submit(thumbnail, data) for sha, data in images.items()}
        for sha, job in jobs.items():
            try:
                made[sha] = job.result()
            except (ImageError, OSError) as exc:
                log.debug("thumbnail of %s failed: %s", sha[:12], exc)
    return made


def collect(view: OpenedRun, order: list[str], limit: int,
            ready: Mapping[str, str | bytes] | None = None) -> tuple[dict[str, str], str]:
    """{sha256: data URL} for the first `limit` images of `order`, in that order, and a note
    on what is missing. `ready`: what the run prepared while it went on (`report.early`):
    thumbnails made (data URLs), taken as they are, and encoded images, made into
    thumbnails here if shown; the others are read from the data, through the run's trusted
    definition (`view.shown`), rebuilt only to be read (`build_to_read`); a run shown with
    the generic one has none."""
    if not order:
        return {}, ""
    if view.untrusted is not None:
        return {}, ("No thumbnails: they are read from the run's data by its benchmark's own "
                    "code, which visioneval runs only when you name it (--definition).")
    shown = order[:limit]
    wanted = set(shown)
    prepared = {sha: ready[sha] for sha in shown if sha in ready} if ready else {}
    got = {sha: made for sha, made in prepared.items() if isinstance(made, str)}
    got.update(_made_from({sha: data for sha, data in prepared.items()
                           if isinstance(data, bytes)}))
    refused: dict[str, str] = {}  # too big to decode: {sha256: why}
    if len(got) < len(wanted):
        try:
            benchmark = view.shown.build_to_read(dict(view.info.options))
        except Exception as exc:  # data moved or offline: the report works without pictures
            return {}, f"no thumbnails: the run's data cannot be read ({exc})"
        made = _made(benchmark.samples(), wanted - got.keys())
        for sha, (name, job) in made.items():
            try:
                got[sha] = job.result()
            except ImageError as exc:
                refused[sha] = str(exc)
                log.warning("no thumbnail for %s", exc)
            except OSError as exc:
                log.debug("thumbnail of %s (%s) failed: %s", sha[:12], name, exc)
    found = {sha: got[sha] for sha in shown if sha in got}
    missing = len(wanted) - len(found) - len(refused)
    if view.data_change is not None:  # missing because the data is not the run's any more
        gone = (f"; {missing} of the {len(wanted)} images of the embedded samples are not in "
                "it now and have no thumbnail" if missing else "")
        more = (f" Thumbnails for at most {limit} images (`visioneval report RUN_DIR "
                "--thumbnails N` for more)." if len(order) > limit else "")
        note = view.data_change[0].upper() + view.data_change[1:] + gone + "." + more
    else:
        note = "" if len(found) + len(refused) >= len(order) else \
            f"Thumbnails for {len(found)} of the {len(order)} images of the embedded " \
            f"samples (limit {limit}; errors and wrong answers first; `visioneval report " \
            "RUN_DIR --thumbnails N` for more)."
    if refused:
        first = next(iter(refused.values()))
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        note = " ".join(filter(None, [note, f"No thumbnail for {first}{more}."]))
    return found, note
