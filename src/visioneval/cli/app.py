"""The typer application and its sub-apps; command modules register on them."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
                  help="Measure how well vision-language models see.")
data_app = typer.Typer(no_args_is_help=True, help="Make datasets in the benchmarks' schemas.")
app.add_typer(data_app, name="data")
