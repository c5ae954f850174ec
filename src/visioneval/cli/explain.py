"""`visioneval explain`: why a run's number differs from the paper's, step by step.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from visioneval.cli.app import app


@app.command()
def explain(
    run_dir: Annotated[Path, typer.Argument(help="A finished run of a perception benchmark.",
                                            show_default=False)],
    paper_model: Annotated[str | None, typer.Option(
        metavar="NAME", help="The published model to start from (any spelling; default: the "
        "run's model name).")] = None,
    paper_value: Annotated[float | None, typer.Option(
        metavar="PERCENT", help="Start from this number instead (e.g. another paper's), in "
        "the paper's metric (percent).")] = None,
    as_protocol: Annotated[str | None, typer.Option(
        "--as", metavar="PROTOCOL", help="Whose number is yours: paper, lmms-eval or "
        "vlmevalkit (default: each protocol the run scored).")] = None,
    labels: Annotated[Literal["original", "corrected"], typer.Option(
        help="Your number on the original labels or the corrected ones.")] = "original",
    transport: Annotated[str | None, typer.Option(
        metavar="VARIANT", help="The run's variant that shows the model what the paper's "
        "model saw (default: its one image-changing variant).")] = None,
    paper_side: Annotated[int | None, typer.Option(
        metavar="PX", min=1, help="The long side the paper's model saw (336 for LLaVA-1.5): "
        "says which --variant max-side:N shows your model the same through your endpoint "
        "(as the resolution probe measured it).")] = None,
    definition: Annotated[str | None, typer.Option(
        metavar="MODULE:NAME", help="Read a run of your own benchmark with this "
        "definition.")] = None,
) -> None:
    """Why your number differs from the paper's: a waterfall from the paper's published
    number for the model to yours, one measured cause at a time (the scoring protocol and
    its parts, label corrections, image transport, sampling noise, what remains
    unexplained). Written to explanation.json and drawn on the run's report page."""
    from visioneval.commands.explain import ExplainRequest
    from visioneval.commands.explain import explain as command

    raise typer.Exit(command(ExplainRequest(
        run_dir, paper_model=paper_model, paper_value=paper_value, protocol=as_protocol,
        labels=labels, transport=transport, paper_side=paper_side, definition=definition)))
