"""`visioneval data synth-layout`; each benchmark's own `synth-NAME` is generated from its
definition (cli/generated.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import data_app
from visioneval.cli.generated import OVERWRITE_HELP, write_synth


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
    from visioneval.layout.synth import write_random

    def write(into: Path) -> list[str]:
        ids = write_random(into, n, boxes=boxes, seed=seed, model=model, variant=variant)
        return [f"{out}: {len(ids)} pairs ({ids[0]} ... {ids[-1]}), model {model}, "
                f"variant {variant}"]

    write_synth(out, overwrite, write)
