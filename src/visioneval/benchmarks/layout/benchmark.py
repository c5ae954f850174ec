"""CANVAS's layout-generation metrics as a benchmark that asks no model.

A sample is one (ground truth, generated design) pair of one variant, id `variant/gid`; a
pair that lacks a file is a skipped row with the reason. No request is sent: the solver
computes the sample's metrics from the files (`layout.pipeline.evaluate_pair`, in a process
pool beside the event loop), adds the semantic match (`captions`) and CANVAS's completeness
aggregates, and the record holds the sample's flat results under `parsed["layout"]`.
Everything else is the engine's: journal, resume, shards, merge, Ray, report."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.layout import captions, tables
from visioneval.benchmarks.layout.options import LayoutOptions
from visioneval.benchmarks.layout.pool import MetricPool
from visioneval.benchmarks.layout.tables import KEY, VIZ_DIR
from visioneval.canvas import pairs as found
from visioneval.canvas.pairs import Pair, Skipped
from visioneval.canvas.pipeline import (
    SampleOptions,
    add_completeness,
    default_workers,
    evaluate_pair,
)
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Message, Record, Response, Sample, SkippedRow, user
from visioneval.core.runfiles import BenchmarkPlan, RunInfo
from visioneval.core.solver import Ask, Solved, Solver
from visioneval.io.images import Image, read_file

log = logging.getLogger("visioneval.canvas")



@dataclass(frozen=True)
class Collection:
    """The pairs of a run, in (variant, id) order; the pairs that cannot be scored and why;
    the --ids that match nothing."""

    pairs: list[Pair]
    skipped: list[Skipped]
    missing_ids: list[str]


def sample_id(variant: str, gid: str) -> str:
    return f"{variant}/{gid}"


class LayoutRun(Benchmark[LayoutOptions]):
    name = "layout"

    def __init__(self, options: LayoutOptions):
        super().__init__(options)
        self._pairs: dict[str, Pair] = {}
        self._pool = MetricPool(options.workers or _cores())
        self._semantic: asyncio.Task[captions.SemanticStep] | None = None

    # -- the data ----------------------------------------------------------------------------
    @cached_property
    def collection(self) -> Collection:
        """The CANVAS folder read (once): FileNotFoundError or ValueError, one line, when
        there is nothing to run."""
        base = Path(self.options.base_dir)
        if not base.exists():
            raise FileNotFoundError(f"base directory not found: {base}")
        if not base.is_dir():
            raise ValueError(f"--base-dir {base} is not a directory")
        kept: list[Pair] = []
        skipped: list[Skipped] = []
        for variant in self.options.variants:
            p, s = found.collect_pairs(base, self.options.model, variant)
            kept += p
            skipped += s
        kept, skipped, missing = found.select(kept, skipped, self.options.ids)
        if not kept:
            raise ValueError(f"no complete GT/generated pair to evaluate in {base} "
                             f"({len(skipped)} skipped)")
        return Collection(kept, skipped, missing)

    def plan(self) -> BenchmarkPlan:
        found = self.collection
        return BenchmarkPlan.model_validate({
            "benchmark": self.name, "options": self.options.model_dump(),
            "dataset": {"source": self.options.base_dir,
                        "fingerprint": self._fingerprint(found),
                        "pairs": len(found.pairs), "skipped": len(found.skipped),
                        "missing_ids": found.missing_ids}})

    def _fingerprint(self, found: Collection) -> str:
        """Every file a sample reads (relative path and content), the skipped pairs and the
        earlier result `--skip-semantic` reuses: a resume of changed data is refused."""
        base = Path(self.options.base_dir)
        outer = hashlib.sha256()
        for pair in found.pairs:
            files = [pair.gt_image, pair.gt_json, pair.gen_image, pair.gen_json,
                     pair.response, pair.expected_tools]
            outer.update(f"pair\0{pair.variant}\0{pair.id}\n".encode())
            for path in files:
                if path is not None:
                    outer.update(f"{_relative(path, base)}\0{_digest(path)}\n".encode())
        for skip in found.skipped:
            outer.update(f"skipped\0{skip.variant}\0{skip.id}\0{skip.reason}\n".encode())
        if self.options.skip_semantic and self.options.semantic_from:
            source = Path(self.options.semantic_from)
            if source.is_dir():
                source = source / tables.RESULTS_JSON
            outer.update(f"semantic\0{_digest(source)}\n".encode())
        return outer.hexdigest()

    def total(self) -> int:
        return len(self.collection.pairs) + len(self.collection.skipped)

    def samples(self) -> Iterator[Sample | SkippedRow]:
        found = self.collection
        for pair in found.pairs:
            key = sample_id(pair.variant, pair.id)
            self._pairs[key] = pair
            yield Sample(id=key, group=pair.variant, messages=_messages(pair), target=pair.id,
                         metadata={"id": pair.id, "variant": pair.variant,
                                   "folder": pair.folder})
        for skip in found.skipped:
            yield SkippedRow(skip.variant, skip.id, skip.reason)

    # -- solving -------------------------------------------------------------------------------
    @property
    def judge(self) -> BackendSpec | None:
        """A served captioner (the semantic match's VLM); none when the metric cannot be
        computed anyway (skipped, or MiniLM not installed)."""
        o = self.options
        if not o.served_captioner or captions.embedder_missing(o):
            return None

        return BackendSpec.model_validate({
            "kind": o.caption_backend, "model": o.caption_model,
            "base_url": o.caption_base_url, "api_key_env": o.caption_api_key_env})

    @property
    def solve(self) -> Solver:
        return self._solve

    async def _solve(self, sample: Sample, ask: Ask) -> Solved:
        started = time.perf_counter()
        pair = self._pairs[sample.id]
        viz = str(ask.run_dir / VIZ_DIR) if self.options.viz else None
        values = await self._pool.run(evaluate_pair, pair, SampleOptions(viz_dir=viz))
        step = await self._semantic_step()
        await step.apply(values, pair, ask)
        add_completeness(values)
        _say(values)
        response = Response(source="code", latency_s=time.perf_counter() - started)
        return Solved(response, {KEY: values}, {})

    async def _semantic_step(self) -> captions.SemanticStep:
        """The session's semantic step, planned once per event loop (the first samples wait
        for it)."""
        loop = asyncio.get_running_loop()
        if self._semantic is None or self._semantic.get_loop() is not loop:
            self._semantic = loop.create_task(captions.plan(self.options))
        step: captions.SemanticStep = await asyncio.shield(self._semantic)
        return step

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        return {}, {}  # every sample is scored by its solver

    # -- results -------------------------------------------------------------------------------
    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        return tables.summarize((r.parsed.get(KEY) or {} for r in records),
                                self.options.variants)

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return tables.write(metrics, info, directory, self.options)


def _messages(pair: Pair) -> tuple[Message, ...]:
    """The generated render, for the report's thumbnail (never sent; the ground truth's is
    not read: one image a sample keeps the event loop's share small). A render that is not
    an image is left out (its pixel metrics say why)."""
    try:
        image = Image.from_bytes(read_file(pair.gen_image, str(pair.gen_image)))
    except ValueError:
        return ()
    return (user("generated render", image),)


def _say(values: dict[str, Any]) -> None:
    """The choices a sample's numbers depend on, and each distinct metric error once with
    the families it hit (as the sample finishes)."""
    where = f"{values['variant']}/{values['id']}"
    for family, note in (values.get("notes") or {}).items():
        log.warning("%s (%s): %s", where, family, note)
    messages: dict[str, list[str]] = {}
    for key, value in values.items():
        if key.endswith("_error"):
            messages.setdefault(str(value), []).append(key.removesuffix("_error"))
    for message, families in messages.items():
        log.error("%s (%s): %s", where, ", ".join(families), message)


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return h.hexdigest()


def _cores() -> int:
    return default_workers()


def build(options: dict[str, Any] | LayoutOptions) -> LayoutRun:
    """The benchmark from its options (as run.json records them); reads nothing yet."""
    return LayoutRun(options if isinstance(options, LayoutOptions)
                     else LayoutOptions.model_validate(options))
