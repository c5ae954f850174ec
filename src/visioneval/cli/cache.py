"""`visioneval cache`: what the response cache holds (by run and model), and clearing it.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from visioneval.cli.app import WrappedGroup, app
from visioneval.cli.panels import PanelTyper

cache_app = PanelTyper(cls=WrappedGroup, no_args_is_help=True, rich_markup_mode=None,
                       help="List, show and clear the response cache (answers kept by the "
                       "run that stored them and the model that gave them).")
app.add_typer(cache_app, name="cache")

CacheDirOpt = Annotated[Path | None, typer.Option(
    "--cache-dir", metavar="DIR", help="The cache folder.",
    show_default="$XDG_CACHE_HOME/visioneval or ~/.cache/visioneval")]
RunOpt = Annotated[Path | None, typer.Option(
    "--run", metavar="DIR", help="Only the answers this run directory stored.")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", metavar="NAME", help="Only the answers of this model name.")]


@cache_app.command("list")
def list_entries(cache_dir: CacheDirOpt = None) -> None:
    """Every group of cached answers: the run that stored them, the model and what its
    server said it serves, how many, and when."""
    from visioneval.commands.cache import list_entries as command

    raise typer.Exit(command(cache_dir))


@cache_app.command()
def show(run: RunOpt = None, model: ModelOpt = None, cache_dir: CacheDirOpt = None) -> None:
    """The cached answers of one run (--run DIR) or one model (--model NAME)."""
    from visioneval.commands.cache import show as command

    raise typer.Exit(command(run, model, cache_dir))


@cache_app.command()
def clear(run: RunOpt = None, model: ModelOpt = None,
          all_entries: Annotated[bool, typer.Option("--all", help="Every cached answer.")
                                 ] = False,
          cache_dir: CacheDirOpt = None) -> None:
    """Delete cached answers: those of a run (--run DIR), of a model (--model NAME), or
    --all. The next run asks the model again."""
    from visioneval.commands.cache import clear as command

    raise typer.Exit(command(run, model, all_entries, cache_dir))
