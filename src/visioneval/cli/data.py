"""`visioneval data synth-layout`, `data inspect` and `data repage`; each benchmark's own
`synth-NAME` is generated from its definition (cli/generated.py).

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import data_app
from visioneval.cli.generated import OVERWRITE_HELP


@data_app.command("synth-layout")
def synth_layout(
    out: Annotated[Path, typer.Option(metavar="DIR", help="CANVAS-shaped folder to write "
                                      "(then layout's --base-dir).")],
    n: Annotated[int, typer.Option(min=1, help="GT/generated pairs.")] = 20,
    boxes: Annotated[int, typer.Option(min=1, help="Boxes per design.")] = 40,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    model: Annotated[str, typer.Option(metavar="NAME", help="Model folder name.")
                     ] = "gpt-4o",
    variant: Annotated[str, typer.Option(metavar="NAME", help="Variant folder name.")
                       ] = "image_only",
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
) -> None:
    """Write random UI designs and perturbed 'generated' versions in CANVAS's layout."""
    from visioneval.commands.data import synth_layout as command

    raise typer.Exit(command(out, n=n, boxes=boxes, seed=seed, model=model, variant=variant,
                             overwrite=overwrite))


@data_app.command("inspect")
def inspect_data(
    path: Annotated[Path, typer.Argument(metavar="DIR", help="A local copy of a dataset "
                                         "(a folder of parquet files) or one parquet file.",
                                         show_default=False)],
) -> None:
    """Print each parquet file's row groups and column chunks: rows, pages, the largest
    page's size as stored and decompressed (a dictionary page counts), and which reader
    visioneval uses for it (pyarrow, or its page streamer for big images or big pages)."""
    from visioneval.commands.data import inspect_data as command

    raise typer.Exit(command(path))


@data_app.command("repage")
def repage_data(
    source: Annotated[Path, typer.Argument(metavar="IN", help="A parquet file, or a folder "
                                           "of them.", show_default=False)],
    target: Annotated[Path, typer.Argument(metavar="OUT", help="The file (or folder) to "
                                           "write; must not exist yet.", show_default=False)],
    page_rows: Annotated[int, typer.Option(min=1, metavar="N", help="Rows between the "
                                           "writer's page-size checks: a page closes at the "
                                           "first N-row boundary past 1 MiB, so it holds "
                                           "about 1 MiB of small images, or at most N big "
                                           "ones.")] = 1,
) -> None:
    """Rewrite parquet files with small pages, for readers that hold a whole page (pyarrow,
    datasets, pandas): the same values, schema, Hugging Face metadata, row groups and
    codecs. visioneval itself reads big pages in bounded memory either way."""
    from visioneval.commands.data import repage_data as command

    raise typer.Exit(command(source, target, page_rows))
