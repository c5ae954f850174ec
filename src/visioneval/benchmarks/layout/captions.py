"""A layout sample's semantic match inside a run: caption both renders, embed, compare
(`layout.semantic`), or reuse an earlier result's values (`--skip-semantic`), or say why the
metric is absent.

A served captioner is the run's judge model: its requests go through the engine (cache,
retries, the key rules, cost), each distinct image once per session. BLIP runs in a thread
of this process. The embedder is loaded once, at the first sample that needs it, and runs
in a thread (MiniLM is CPU-bound)."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from pathlib import Path
from typing import Any

from visioneval.benchmarks.layout.options import CAPTION_TOKENS, LayoutOptions
from visioneval.benchmarks.layout.tables import RESULTS_JSON
from visioneval.canvas import semantic
from visioneval.canvas.pairs import Pair
from visioneval.canvas.pipeline import load_previous
from visioneval.core.records import GenerationSettings, Request, user
from visioneval.core.solver import Ask
from visioneval.io.images import Image

log = logging.getLogger("visioneval.canvas")

Caption = str | Exception


class SemanticStep:
    """What every sample of one session does for its semantic match (`plan`, once)."""

    async def apply(self, values: dict[str, Any], pair: Pair, ask: Ask) -> None:
        raise NotImplementedError


class Absent(SemanticStep):
    def __init__(self, reason: str):
        self.reason = reason

    async def apply(self, values: dict[str, Any], pair: Pair, ask: Ask) -> None:
        semantic.mark_absent([values], self.reason)


class Reuse(SemanticStep):
    """`--skip-semantic`: an earlier result's semantic_match and captions (CANVAS's
    `--skip_blip`), per (id, variant); CANVAS's list has no variant and fits any."""

    def __init__(self, previous: dict[tuple[str, str | None], dict[str, Any]], source: str):
        self.previous = previous
        self.source = source

    async def apply(self, values: dict[str, Any], pair: Pair, ask: Ask) -> None:
        earlier = (self.previous.get((pair.id, pair.variant))
                   or self.previous.get((pair.id, None)))
        if earlier is None:
            values.setdefault("absent", {})["semantic_match"] = (
                f"skipped (--skip-semantic) and no earlier value in {self.source}")
        else:
            values.update(earlier)


class Captioned(SemanticStep):
    """Captions by the served captioner (through `ask`, as the judge) or BLIP."""

    def __init__(self, options: LayoutOptions, embedder: semantic.Embedder,
                 blip: semantic.BlipCaptioner | None):
        self.name = options.captioner_name() or "?"
        self.prompt = options.caption_prompt or semantic.CAPTION_PROMPT
        self.embedder = embedder
        self.blip = blip
        self._captions: dict[str, asyncio.Future[Caption]] = {}

    async def apply(self, values: dict[str, Any], pair: Pair, ask: Ask) -> None:
        # Shielded: a caption is shared by every sample of its image.
        gt, gen = await asyncio.gather(asyncio.shield(self._caption(pair.gt_image, ask)),
                                       asyncio.shield(self._caption(pair.gen_image, ask)))
        captions = {str(pair.gt_image): gt, str(pair.gen_image): gen}
        await asyncio.to_thread(semantic.apply_semantic, [values], [pair], captions,
                                self.embedder)

    def _caption(self, path: Path, ask: Ask) -> asyncio.Future[Caption]:
        """Each distinct image is captioned once (a GT render is shared by every variant)."""
        key = str(path)
        found = self._captions.get(key)
        if found is None:
            found = self._captions[key] = asyncio.ensure_future(self._ask(path, ask))
        return found

    async def _ask(self, path: Path, ask: Ask) -> Caption:
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as exc:
            return exc
        if self.blip is not None:
            return (await self.blip.caption([data]))[0]
        try:
            image = Image.from_bytes(data)
        except ValueError as exc:
            return exc
        settings = GenerationSettings(temperature=0.0, max_tokens=CAPTION_TOKENS)
        response = await ask(Request((user(image, self.prompt),), settings), judge=True)
        if not response.ok:
            return RuntimeError(f"captioner {self.name}: {response.error}")
        return response.text or ""


async def plan(options: LayoutOptions) -> SemanticStep:
    """The session's semantic step; what cannot run is said once and the metric is absent
    with the reason (never 0)."""
    if options.skip_semantic:
        return await asyncio.to_thread(_reuse, options)
    if options.caption_backend is None:
        return _absent("no captioner (give --caption-backend and --caption-model)")
    try:
        embedder = await asyncio.to_thread(semantic.make_embedder, options.embedder)
        blip = await asyncio.to_thread(semantic.BlipCaptioner, options.caption_model) \
            if options.caption_backend == "blip" else None
    except semantic.Unavailable as exc:
        return _absent(str(exc))
    return Captioned(options, embedder, blip)


def _absent(reason: str) -> Absent:
    log.warning("semantic match left out: %s", reason)
    return Absent(reason)


def _reuse(options: LayoutOptions) -> SemanticStep:
    if options.semantic_from is None:
        return Absent("skipped (--skip-semantic), and no earlier result named "
                      "(--semantic-from)")
    source = Path(options.semantic_from)
    if source.is_dir():  # an earlier run directory: its results file

        source = source / RESULTS_JSON
    previous = load_previous(source)
    log.info("--skip-semantic: earlier semantic values of %d sample(s) in %s", len(previous),
             source)
    return Reuse(previous, str(source))


def embedder_missing(options: LayoutOptions) -> bool:
    """Whether MiniLM cannot load here (its package is not installed): a served captioner
    is then neither checked nor asked, as the metric cannot be computed anyway."""
    if options.embedder != "minilm":
        return False

    return importlib.util.find_spec("sentence_transformers") is None
