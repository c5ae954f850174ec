"""`visioneval data ...`: datasets in the benchmarks' real schemas, made offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import data_app


@data_app.command("synth-salbench")
def synth_salbench(
    out: Annotated[Path, typer.Option(help="Folder to write P3, P3_box, P3_box_img into.")],
    n: Annotated[int, typer.Option(min=1, help="Rows per config.")] = 100,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Write a P3-style synthetic SalBench set in the real schema and folder layout."""
    from visioneval.benchmarks.salbench.synth import write_synthetic

    counts = write_synthetic(out, n, seed)
    for config, rows in counts.items():
        typer.echo(f"{out / config}: {rows} rows")


@data_app.command("synth-illusionbench")
def synth_illusionbench(
    out: Annotated[Path, typer.Option(help="Folder to write data/Illusion_<SUBSET>-*.parquet "
                                      "into (use it as --data-dir).")],
    n: Annotated[int, typer.Option(min=1, help="Rows per subset (21 or more covers every "
                                   "class).")] = 24,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Write a small IllusionBench-shaped set (ICON, LOGO, IN) in the real schema and names."""
    from visioneval.benchmarks.illusionbench.synth import write_synthetic

    for subset, path in write_synthetic(out, n, seed).items():
        typer.echo(f"{path}: {n} rows ({subset})")


@data_app.command("synth-layout")
def synth_layout(
    out: Annotated[Path, typer.Option(help="CANVAS-shaped folder to write (use it as "
                                      "--base-dir).")],
    n: Annotated[int, typer.Option(min=1, help="GT/generated pairs.")] = 20,
    boxes: Annotated[int, typer.Option(min=1, help="Boxes per design.")] = 40,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    model: Annotated[str, typer.Option(help="Model folder name.")] = "gpt-4o",
    variant: Annotated[str, typer.Option(help="Variant folder name.")] = "image_only",
) -> None:
    """Write random UI designs and perturbed 'generated' versions in CANVAS's layout."""
    from visioneval.layout.synth import write_random

    ids = write_random(out, n, boxes=boxes, seed=seed, model=model, variant=variant)
    typer.echo(f"{out}: {len(ids)} pairs ({ids[0]} ... {ids[-1]}), model {model}, "
               f"variant {variant}")
