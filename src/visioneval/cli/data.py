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
