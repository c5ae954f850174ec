"""`visioneval layout`: score generated UI layouts against the ground truth (CANVAS).

`run_layout` is what the CLI calls; `LayoutArgs` holds the options without typer."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from visioneval.shards import Shard

log = logging.getLogger("visioneval.layout")

CAPTION_BACKENDS = ("openai", "ollama", "anthropic", "blip")
SHOWN = ("canvas_fill", "pixel_fidelity", "semantic_match", "element_count_ratio",
         "layout_overlap", "mean_iou", "alignment_f1", "iou50_f1", "block_match",
         "tool_efficiency", "visual_completeness", "struct_completeness")


@dataclass
class LayoutArgs:
    base_dir: Path
    model: str
    variant: str  # one variant, or several separated by commas
    out: Path
    ids: list[str] | None = None
    skip_semantic: bool = False
    viz: bool = False
    viz_dir: Path | None = None  # default: next to --out, "<stem>-viz"
    workers: int | None = None  # default: cpu count
    caption_backend: str | None = None
    caption_model: str | None = None
    caption_base_url: str | None = None
    caption_api_key_env: str | None = None
    caption_prompt: str | None = None
    embedder: str = "minilm"
    progress: bool = True
    shard: Shard | None = None  # only the pairs whose variant/id hashes to this shard
    executor: str = "local"  # ray: the per-pair metrics as Ray tasks
    ray_address: str | None = None

    def variants(self) -> list[str]:
        names = [v.strip() for v in self.variant.split(",") if v.strip()]
        if not names:
            raise ValueError("--variant is empty")
        return list(dict.fromkeys(names))

    def resolved_viz_dir(self) -> Path:
        return self.viz_dir or self.out.with_name(self.out.stem + "-viz")


def _check(args: LayoutArgs) -> None:
    if not args.base_dir.exists():
        raise FileNotFoundError(f"base directory not found: {args.base_dir}")
    if not args.base_dir.is_dir():
        raise ValueError(f"--base-dir {args.base_dir} is not a directory")
    if args.workers is not None and args.workers < 1:
        raise ValueError("--workers must be at least 1")
    if args.caption_backend is not None and args.caption_backend not in CAPTION_BACKENDS:
        raise ValueError(f"--caption-backend must be one of {', '.join(CAPTION_BACKENDS)}")
    if args.embedder not in ("minilm", "bow"):
        raise ValueError("--embedder must be minilm or bow")
    if args.out.exists() and args.out.is_dir():
        raise ValueError(f"--out {args.out} is a directory; give a .json file path")


def run_layout(args: LayoutArgs, console: Console, err: Console) -> int:
    """Evaluate; write the JSON, the CSV beside it and (with viz) the pictures. Exit code:
    0 all samples scored, 1 some samples have a metric error or some pairs were skipped,
    2 (raised as a user error) nothing could run."""
    from visioneval.layout import pairs as pairs_mod
    from visioneval.layout import pipeline, semantic

    _check(args)
    base = args.base_dir.resolve()
    found, skipped = [], []
    for variant in args.variants():
        p, s = pairs_mod.collect_pairs(base, args.model, variant)
        found += p
        skipped += s
    found, skipped, missing_ids = pairs_mod.select(found, skipped, args.ids)
    for gid in missing_ids:
        log.warning("--ids %s: no such sample", gid)
    for pair in skipped:
        log.warning("skipped %s/%s: %s", pair.variant, pair.id, pair.reason)
    if not found:
        raise ValueError(f"no complete GT/generated pair to evaluate in {base} "
                         f"({len(skipped)} skipped)")
    shard_info = None
    if args.shard is not None:
        found, skipped, shard_info = _in_shard(found, skipped, args.shard)

    settings = semantic.SemanticSettings(
        caption_backend=args.caption_backend, caption_model=args.caption_model,
        caption_base_url=args.caption_base_url, caption_api_key_env=args.caption_api_key_env,
        embedder=args.embedder)
    if args.caption_prompt:
        settings = dataclasses.replace(settings, prompt=args.caption_prompt)
    embedder, captioner, semantic_reason = None, None, None
    if not args.skip_semantic:
        try:
            embedder = semantic.make_embedder(settings.embedder)
            captioner = semantic.make_captioner(settings)
        except semantic.Unavailable as exc:
            semantic_reason = str(exc)
            log.warning("semantic match left out: %s", exc)
        if captioner is not None and hasattr(captioner, "preflight"):
            asyncio.run(_preflight(captioner))  # unreachable captioner: exit 2 now

    workers = args.workers or pipeline.default_workers()
    viz_dir = args.resolved_viz_dir() if args.viz else None
    options = pipeline.SampleOptions(viz_dir=str(viz_dir) if viz_dir else None)
    started = time.perf_counter()
    samples = _evaluate(found, options, workers, err, args.progress, args.executor,
                        args.ray_address)

    if args.skip_semantic:
        _reuse_semantic(samples, pipeline.load_previous(args.out), args.out)
    elif semantic_reason is not None:
        semantic.mark_absent(samples, semantic_reason)
    else:
        assert embedder is not None  # made above, or semantic_reason says why not
        captions = asyncio.run(_caption(captioner, found))
        semantic.apply_semantic(samples, found, captions, embedder)
    for sample in samples:
        pipeline.add_completeness(sample)
    elapsed = time.perf_counter() - started

    document = {
        "tool": "visioneval layout", "base_dir": str(base), "model": args.model,
        "variants": args.variants(), "ids": args.ids,
        **({"shard": shard_info} if shard_info is not None else {}),
        "settings": {"workers": workers, "skip_semantic": args.skip_semantic,
                     "semantic": {k: v for k, v in asdict(settings).items()
                                  if k != "caption_api_key_env"}
                     | {"captioner": getattr(captioner, "name", None),
                        "embedder": getattr(embedder, "name", None)}},
        "samples": samples,
        "skipped": [s.as_dict() for s in skipped],
        "missing_ids": missing_ids,
        "summary": pipeline.summarise(samples),
        "seconds": round(elapsed, 2),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pipeline.write_json(args.out, document)
    csv_path = args.out.with_suffix(".csv")
    pipeline.write_csv(csv_path, samples)
    index = None
    if viz_dir is not None:
        from visioneval.layout.report import write_index

        viz_dir.mkdir(parents=True, exist_ok=True)
        index = write_index(viz_dir, document, pipeline.numeric_keys(samples))

    _print_summary(console, document)
    from visioneval.report.layout import write_layout_report

    page = write_layout_report(args.out)
    for sample in samples:  # choices the numbers depend on (several response files)
        for family, note in (sample.get("notes") or {}).items():
            log.warning("%s/%s (%s): %s", sample["variant"], sample["id"], family, note)
    failed = [s for s in samples if any(k.endswith("_error") for k in s)]
    for sample in failed:  # one line per distinct message, naming the families it hit
        messages: dict[str, list[str]] = {}
        for key, value in sample.items():
            if key.endswith("_error"):
                messages.setdefault(str(value), []).append(key.removesuffix("_error"))
        for message, families in messages.items():
            log.error("%s/%s (%s): %s", sample["variant"], sample["id"], ", ".join(families),
                      message)
    console.print(f"{len(samples)} samples in {elapsed:.1f} s -> {args.out} and {csv_path}"
                  + (f"; pictures: {index}" if index else "") + f"; report: {page}",
                  highlight=False, soft_wrap=True)
    if failed or skipped:
        err.print(f"[yellow]{len(failed)} sample(s) with a metric error, {len(skipped)} "
                  "pair(s) skipped (see the lines above and the output file)[/]",
                  highlight=False)
        return 1
    return 0


async def _preflight(captioner) -> None:
    try:
        await captioner.preflight()
    finally:
        await captioner.aclose()


async def _caption(captioner, found) -> dict:
    from visioneval.layout.semantic import caption_pairs

    try:
        return await caption_pairs(captioner, found)
    finally:
        await captioner.aclose()


def _in_shard(found: list, skipped: list, shard: Shard) -> tuple[list, list, dict]:
    """The pairs (and skipped pairs) of `shard`, keyed by variant/id, and where each stood
    in the whole run's order, so `visioneval merge` puts them back in that order."""
    def key(item) -> str:
        return f"{item.variant}/{item.id}"

    kept = [(i, p) for i, p in enumerate(found) if shard.holds(key(p))]
    kept_skipped = [(i, s) for i, s in enumerate(skipped) if shard.holds(key(s))]
    info = shard.as_dict() | {"positions": [i for i, _ in kept],
                              "skipped_positions": [i for i, _ in kept_skipped],
                              "pairs": len(found), "skipped_pairs": len(skipped)}
    return [p for _, p in kept], [s for _, s in kept_skipped], info


def _evaluate(found, options, workers: int, err: Console, show: bool, executor: str = "local",
              ray_address: str | None = None) -> list[dict]:
    from visioneval.engine.progress import RunProgress
    from visioneval.layout import pipeline

    with RunProgress(len(found), "layout", console=err, enabled=show) as bar:
        def advance(sample: dict) -> None:
            bar.advance(any(k.endswith("_error") for k in sample))

        if executor == "ray":
            from visioneval.distributed.layout_ray import run_samples_on_ray

            return run_samples_on_ray(found, options, ray_address, advance, err)
        return pipeline.run_samples(found, options, workers, progress=advance)


def _reuse_semantic(samples: list[dict], previous: dict, out: Path) -> None:
    """--skip-semantic: the values of an earlier run in the --out file, like CANVAS's
    `--skip_blip`."""
    reused = 0
    for sample in samples:
        earlier = (previous.get((sample["id"], sample["variant"]))
                   or previous.get((sample["id"], None)))
        if earlier is None:
            sample.setdefault("absent", {})["semantic_match"] = (
                f"skipped (--skip-semantic) and no earlier value in {out}")
            continue
        sample.update(earlier)
        reused += 1
    log.info("--skip-semantic: reused %d earlier semantic value(s) from %s", reused, out)


def _print_summary(console: Console, document: dict) -> None:
    for variant, table in document["summary"].items():
        view = Table(title=f"{document['model']} / {variant}", title_justify="left")
        view.add_column("metric")
        for col in ("mean", "median", "count"):
            view.add_column(col, justify="right")
        for key in SHOWN:
            if key in table:
                s = table[key]
                view.add_row(key, f"{s['mean']:.4f}", f"{s['median']:.4f}", str(s["count"]))
        console.print(view)
