"""`visioneval cache`: what the response cache holds (by run and model), and clearing it."""

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
    from visioneval.commands.cache import show_groups
    from visioneval.commands.common import consoles, guarded

    console, err = consoles()
    raise typer.Exit(guarded(err, lambda: show_groups(console, cache_dir, None, None)))


@cache_app.command()
def show(run: RunOpt = None, model: ModelOpt = None, cache_dir: CacheDirOpt = None) -> None:
    """The cached answers of one run (--run DIR) or one model (--model NAME)."""
    from visioneval.commands.cache import show_groups
    from visioneval.commands.common import consoles, guarded

    console, err = consoles()

    def action() -> int:
        if run is None and model is None:
            from visioneval.invocation import command

            raise ValueError("give --run RUN_DIR or --model NAME (or use "
                             f"`{command('cache', 'list')}` for everything)")
        return show_groups(console, cache_dir, run, model)

    raise typer.Exit(guarded(err, action))


@cache_app.command()
def clear(run: RunOpt = None, model: ModelOpt = None,
          all_entries: Annotated[bool, typer.Option("--all", help="Every cached answer.")
                                 ] = False,
          cache_dir: CacheDirOpt = None) -> None:
    """Delete cached answers: those of a run (--run DIR), of a model (--model NAME), or
    --all. The next run asks the model again."""
    from visioneval.commands.cache import clear_entries
    from visioneval.commands.common import consoles, guarded

    console, err = consoles()

    def action() -> int:
        if run is None and model is None and not all_entries:
            raise ValueError("say what to clear: --run RUN_DIR, --model NAME or --all")
        if all_entries and (run is not None or model is not None):
            raise ValueError("--all clears everything: give it alone, or --run/--model")
        return clear_entries(console, cache_dir, run, model)

    raise typer.Exit(guarded(err, action))
