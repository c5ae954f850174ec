"""The typer application and its sub-apps; command modules register on them."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from visioneval.cli.panels import COL_MAX, PanelTyper, write_rows
from visioneval.terminal import WIDTH


class WrappedGroup(TyperGroup):
    """Lists each command with its whole first sentence, wrapped between words: click cuts
    it to the space left on one line and ends it with "..."."""

    # Typed loosely: typer vendors its own click, whose Context and HelpFormatter are
    # private types (typer._click); the methods called are the same.
    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=1_000)))
        if rows:
            with formatter.section("Commands"):
                write_rows(formatter, rows, min(max(len(n) for n, _ in rows), COL_MAX))


# Plain (click) help, wrapped at the terminal's width up to HELP_WIDTH columns (the width of
# everything visioneval prints), its options in panels (cli/panels.py): typer's rich panels
# cut long words with "..." at 80 columns and label every flag `<bool>`.
HELP_WIDTH = WIDTH
app = PanelTyper(cls=WrappedGroup, no_args_is_help=True, add_completion=False,
                 rich_markup_mode=None, context_settings={"max_content_width": HELP_WIDTH},
                 help="Measure how well vision-language models see.")
data_app = PanelTyper(cls=WrappedGroup, no_args_is_help=True, rich_markup_mode=None,
                      help="Make, inspect and repage datasets.")
app.add_typer(data_app, name="data")


def _print_version(value: bool) -> None:
    if value:
        # `--version` only: `--help` reads no package metadata
        from visioneval.core.version import installed_version

        typer.echo(f"visioneval {installed_version()}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[bool, typer.Option("--version", callback=_print_version,
                                          is_eager=True, help="Print the version and exit.")
                       ] = False,
) -> None:
    """Measure how well vision-language models see."""
