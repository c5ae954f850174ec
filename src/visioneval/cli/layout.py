"""`visioneval layout`: the CANVAS layout-generation metrics over a results directory.

Only typer and typing load at import time; the evaluation modules load inside."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import SPREAD, RayAddressOpt, ShardOpt

_MODEL = "Semantic match"
_OUT = "Output"


@app.command()
def layout(
    base_dir: Annotated[Path | None, typer.Option(
        "--base-dir", help="CANVAS directory: benchmarks/generation_gt and "
        "results/generation_gen/{model}/{variant}.")] = None,
    model: Annotated[str, typer.Option(help="Model folder under results/generation_gen."
                                       )] = "gpt-4o",
    variant: Annotated[str, typer.Option(
        help="Variant folder (several: comma-separated; the summary is per variant)."
    )] = "image_only",
    ids: Annotated[str | None, typer.Option(
        help="Comma-separated GT ids to evaluate (one id: a single sample).")] = None,
    out: Annotated[Path, typer.Option(help="Results JSON; the CSV is written beside it.",
                                      rich_help_panel=_OUT)] = Path("evaluation_results.json"),
    skip_semantic: Annotated[bool, typer.Option(
        "--skip-semantic", help="Do not caption: reuse semantic_match and the captions of "
        "an earlier run from the --out file.", rich_help_panel=_MODEL)] = False,
    viz: Annotated[bool, typer.Option("--viz", help="Draw each sample's boxes and "
                                      "alignment groups, and an index.html.",
                                      rich_help_panel=_OUT)] = False,
    viz_dir: Annotated[Path | None, typer.Option(help="Where the pictures go (default: "
                                                 "<out stem>-viz beside --out).",
                                                 rich_help_panel=_OUT)] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Processes (default: one per "
                                                "core).")] = None,
    caption_backend: Annotated[str | None, typer.Option(
        help="Captioner: openai, ollama, anthropic (a VLM served by that backend) or blip "
        "(transformers; the semantic extra).", rich_help_panel=_MODEL)] = None,
    caption_model: Annotated[str | None, typer.Option(
        help="The captioning model (blip default: Salesforce/blip-image-captioning-base).",
        rich_help_panel=_MODEL)] = None,
    caption_base_url: Annotated[str | None, typer.Option(help="The captioner's server URL.",
                                                         rich_help_panel=_MODEL)] = None,
    caption_api_key_env: Annotated[str | None, typer.Option(
        help="Environment variable holding the captioner's key.", rich_help_panel=_MODEL)
    ] = None,
    caption_prompt: Annotated[str | None, typer.Option(help="The captioning prompt.",
                                                       rich_help_panel=_MODEL)] = None,
    embedder: Annotated[str, typer.Option(
        help="Caption embedder: minilm (all-MiniLM-L6-v2, the semantic extra) or bow "
        "(bag of words, no extra).", rich_help_panel=_MODEL)] = "minilm",
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")
                           ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logs.")] = False,
    shard: ShardOpt = None,
    executor: Annotated[str, typer.Option(
        "--executor", metavar="<local|ray>", help="ray: compute the per-pair metrics as Ray "
        "tasks (the `ray` extra) instead of the local process pool; same results file.",
        rich_help_panel=SPREAD)] = "local",
    ray_address: RayAddressOpt = None,
    base_dir_alias: Annotated[Path | None, typer.Option("--base_dir", hidden=True)] = None,
    skip_blip: Annotated[bool, typer.Option("--skip_blip", hidden=True)] = False,
) -> None:
    """Score generated UI layouts against the ground truth (CANVAS): canvas fill, SSIM,
    semantic match, IoU matching, alignment, tool usage, and scores that do not saturate."""
    from visioneval.commands.common import consoles, guarded, setup_logging, split_list
    from visioneval.commands.layout import LayoutArgs, run_layout

    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        if base_dir is not None and base_dir_alias is not None and base_dir != base_dir_alias:
            raise ValueError("give --base-dir once (--base_dir is the same option)")
        chosen = base_dir or base_dir_alias
        if chosen is None:
            raise ValueError("--base-dir is required")
        from visioneval.distributed.options import Distribution

        how = Distribution.from_flags(shard, executor, None, ray_address)
        return run_layout(LayoutArgs(
            base_dir=chosen, model=model, variant=variant, out=out, ids=split_list(ids),
            skip_semantic=skip_semantic or skip_blip, viz=viz, viz_dir=viz_dir,
            workers=workers, caption_backend=caption_backend, caption_model=caption_model,
            caption_base_url=caption_base_url, caption_api_key_env=caption_api_key_env,
            caption_prompt=caption_prompt, embedder=embedder, progress=not no_progress,
            shard=how.shard, executor=how.executor, ray_address=how.ray_address),
            console, err)

    raise typer.Exit(guarded(err, action))
