"""`visioneval layout`: the CANVAS layout-generation metrics over a results directory, as a
run of the `layout` benchmark (CANVAS's flag spellings kept); the definition registers it
(`HasCommand`).

Only typer and typing load at import time; the evaluation modules load inside."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.options import (
    ExecutorOpt,
    NoCache,
    NoProgress,
    NoReport,
    RayAddressOpt,
    Resume,
    ShardOpt,
    ShardsOpt,
    Verbose,
)
from visioneval.cli.panels import OUTPUT

_MODEL = "Semantic match"


def layout(
    base_dir: Annotated[Path | None, typer.Option(
        "--base-dir", metavar="DIR", help="The CANVAS folder (generation_gt, "
        "generation_gen). Required.")] = None,
    model: Annotated[str | None, typer.Option(
        metavar="NAME", help="Model folder under results/generation_gen.",
        show_default="gpt-4o")] = None,
    variant: Annotated[str | None, typer.Option(
        metavar="A,B", help="Variant folder(s), comma-separated.",
        show_default="image_only")] = None,
    ids: Annotated[str | None, typer.Option(
        metavar="A,B", help="Only these GT ids.", show_default="every id")] = None,
    workers: Annotated[int | None, typer.Option(min=1, metavar="N", help="Processes.",
                                                show_default="one per core")] = None,
    skip_semantic: Annotated[bool, typer.Option(
        "--skip-semantic", help="No captioning: reuse an earlier result's captions.",
        rich_help_panel=_MODEL)] = False,
    semantic_from: Annotated[Path | None, typer.Option(
        metavar="PATH", help="That result: a run folder or results file (CANVAS's too).",
        show_default="--out FILE.json if it exists", rich_help_panel=_MODEL)] = None,
    caption_backend: Annotated[str | None, typer.Option(
        metavar="KIND", help="openai, ollama, anthropic (a served VLM) or blip.",
        rich_help_panel=_MODEL)] = None,
    caption_model: Annotated[str | None, typer.Option(
        metavar="NAME", help="The captioning model.",
        show_default="blip: blip-image-captioning-base", rich_help_panel=_MODEL)] = None,
    caption_base_url: Annotated[str | None, typer.Option(
        metavar="URL", help="The captioner's server URL.", show_default="the backend's",
        rich_help_panel=_MODEL)] = None,
    caption_api_key_env: Annotated[str | None, typer.Option(
        metavar="NAME", help="Variable holding the captioner's key.",
        show_default="a hosted API's own", rich_help_panel=_MODEL)] = None,
    caption_prompt: Annotated[str | None, typer.Option(
        metavar="TEXT", help="The captioning prompt.", show_default="one sentence per screen",
        rich_help_panel=_MODEL)] = None,
    embedder: Annotated[str | None, typer.Option(
        metavar="<minilm|bow>", help="minilm (the semantic extra) or bag of words.",
        show_default="minilm", rich_help_panel=_MODEL)] = None,
    out: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Run directory (FILE.json: the folder FILE).",
        show_default="results/layout-<model>-<time>", rich_help_panel=OUTPUT)] = None,
    viz: Annotated[bool, typer.Option("--viz", help="Draw each sample's boxes and an "
                                      "index.html.", rich_help_panel=OUTPUT)] = False,
    resume: Resume = None,
    no_cache: NoCache = False,
    no_progress: NoProgress = False,
    no_report: NoReport = False,
    verbose: Verbose = False,
    shard: ShardOpt = None,
    executor: ExecutorOpt = "local",
    shards: ShardsOpt = None,
    ray_address: RayAddressOpt = None,
    base_dir_alias: Annotated[Path | None, typer.Option("--base_dir", hidden=True)] = None,
    skip_blip: Annotated[bool, typer.Option("--skip_blip", hidden=True)] = False,
    viz_dir: Annotated[Path | None, typer.Option("--viz-dir", hidden=True)] = None,
) -> None:
    """Score generated UI layouts against the ground truth (CANVAS): canvas fill, SSIM,
    semantic match, IoU matching, alignment, tool usage, and scores that do not saturate."""
    from visioneval.benchmarks.layout.running import LayoutArgs, run_layout
    from visioneval.commands.common import consoles, guarded, setup_logging, split_list

    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        if base_dir is not None and base_dir_alias is not None and base_dir != base_dir_alias:
            raise ValueError("give --base-dir once (--base_dir is the same option)")
        if viz_dir is not None:
            raise ValueError("--viz-dir: the pictures are drawn in the run directory's viz/ "
                             "folder (with --viz); choose the run directory with --out")
        chosen = base_dir or base_dir_alias
        flags = {"--base-dir": chosen, "--model": model, "--variant": variant, "--ids": ids,
                 "--workers": workers, "--viz": viz or None,
                 "--skip-semantic": (skip_semantic or skip_blip) or None,
                 "--semantic-from": semantic_from, "--caption-backend": caption_backend,
                 "--caption-model": caption_model, "--caption-prompt": caption_prompt,
                 "--embedder": embedder, "--out": out}
        return run_layout(LayoutArgs(
            base_dir=chosen, model=model or "gpt-4o", variant=variant or "image_only",
            out=out, ids=split_list(ids), skip_semantic=skip_semantic or skip_blip,
            semantic_from=semantic_from, viz=viz, workers=workers,
            caption_backend=caption_backend, caption_model=caption_model,
            caption_base_url=caption_base_url, caption_api_key_env=caption_api_key_env,
            caption_prompt=caption_prompt, embedder=embedder or "minilm",
            progress=not no_progress, report=not no_report, no_cache=no_cache,
            resume=resume, shard=shard, executor=executor, shards=shards,
            ray_address=ray_address,
            given=tuple(k for k, v in flags.items() if v is not None)), console, err)

    raise typer.Exit(guarded(err, action))
