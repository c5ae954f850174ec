"""Thumbnails for the sample browser, made from the run's own data source.

Records keep an image's sha256, not its bytes; the benchmark is rebuilt from run.json and
its samples are read until every wanted image is found. Each distinct image becomes one small
WebP data URL, shared by all the samples that show it. Decoding happens here, at report
time, never on the evaluation's hot path."""

from __future__ import annotations

import base64
import io
import logging
from typing import Any

from PIL import Image as PILImage

from visioneval.benchmarks import registry

log = logging.getLogger(__name__)
SIDE = 96


def thumbnail(data: bytes, side: int = SIDE) -> str:
    with PILImage.open(io.BytesIO(data)) as im:
        im.thumbnail((side, side))  # shrink first: converting the full image costs more
        buf = io.BytesIO()
        im.convert("RGB").save(buf, format="WEBP", quality=70, method=0)
    return "data:image/webp;base64," + base64.b64encode(buf.getvalue()).decode()


def collect(info: dict[str, Any], order: list[str], limit: int) -> tuple[dict[str, str], str]:
    """{sha256: data URL} for the first `limit` images of `order`, and a note on what is
    missing."""
    if not order:
        return {}, ""
    wanted = set(order[:limit])
    try:
        benchmark = registry.build(info.get("definition") or info["benchmark"], info["options"])
    except Exception as exc:  # data moved or offline: the report works without pictures
        return {}, f"no thumbnails: the run's data cannot be read ({exc})"
    found: dict[str, str] = {}
    target = len(wanted)
    for item in benchmark.samples():
        for message in getattr(item, "messages", ()):
            for image in message.images():
                if image.sha256 in wanted and image.sha256 not in found:
                    try:
                        found[image.sha256] = thumbnail(image.data)
                    except OSError as exc:
                        log.debug("thumbnail of %s failed: %s", image.sha256[:12], exc)
        if len(found) >= target:
            break
    note = "" if len(found) >= len(order) else \
        f"thumbnails for {len(found)} of {len(order)} images (limit {limit}; wrong answers " \
        "and errors first; `visioneval report RUN_DIR --thumbnails N` for more)"
    return found, note
