"""`visioneval layout`: the CANVAS layout-generation metrics over a results directory.

Only typer and typing load at import time; the evaluation modules load inside."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import app
from visioneval.cli.options import NoProgress, RayAddressOpt, ShardOpt, Verbose
from visioneval.cli.panels import OUTPUT, SPREAD

_MODEL = "Semantic match"


@app.command()
def layout(
    base_dir: Annotated[Path | None, typer.Option(
        "--base-dir", metavar="DIR", help="The CANVAS folder (generation_gt, "
        "generation_gen). Required.")] = None,
    model: Annotated[str, typer.Option(metavar="NAME", help="Model folder under "
                                       "results/generation_gen.")] = "gpt-4o",
    variant: Annotated[str, typer.Option(
        metavar="A,B", help="Variant folder(s), comma-separated.")] = "image_only",
    ids: Annotated[str | None, typer.Option(
        metavar="A,B", help="Only these GT ids.", show_default="every id")] = None,
    workers: Annotated[int | None, typer.Option(min=1, metavar="N", help="Processes.",
                                                show_default="one per core")] = None,
    skip_semantic: Annotated[bool, typer.Option(
        "--skip-semantic", help="No captioning: reuse the --out file's captions.",
        rich_help_panel=_MODEL)] = False,
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
    embedder: Annotated[str, typer.Option(
        metavar="<minilm|bow>", help="minilm (the semantic extra) or bag of words.",
        rich_help_panel=_MODEL)] = "minilm",
    shard: ShardOpt = None,
    executor: Annotated[str, typer.Option(
        "--executor", metavar="<local|ray>", help="ray: the per-pair metrics as Ray tasks.",
        rich_help_panel=SPREAD)] = "local",
    ray_address: RayAddressOpt = None,
    out: Annotated[Path, typer.Option(metavar="PATH", help="Results JSON; the CSV beside it.",
                                      rich_help_panel=OUTPUT)] = Path("evaluation_results.json"),
    viz: Annotated[bool, typer.Option("--viz", help="Draw each sample's boxes and an "
                                      "index.html.", rich_help_panel=OUTPUT)] = False,
    viz_dir: Annotated[Path | None, typer.Option(metavar="DIR", help="Where the pictures go.",
                                                 show_default="<out stem>-viz",
                                                 rich_help_panel=OUTPUT)] = None,
    no_progress: NoProgress = False,
    verbose: Verbose = False,
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
