"""--help as a table of contents: each command's options in panels (the benchmark's own,
data, model and endpoints, engine, cost, shards and Ray, output), one line each at 100
columns with its default, wrapped (never cut) on a narrower terminal.

Typer draws panels only through rich, which cuts long words with "..." at 80 columns and
labels every flag `<bool>`; so the app keeps click's plain help and this command class
groups the options by the `rich_help_panel` each one already names."""

from __future__ import annotations

import re
import textwrap
from enum import Enum
from typing import Any

import typer
from typer.core import TyperCommand

# The panels every command shares, in the order --help lists them. A panel not named here
# (a benchmark's own options, a command's own group) comes first; options without a panel
# before those.
DATA = "Data"
MODEL = "Model and endpoints"
JUDGE = "Judge"
ENGINE = "Engine"
COST = "Cost"
CONTROLS = "Controls"
SPREAD = "Shards and Ray"
OUTPUT = "Output"
ORDER = (DATA, MODEL, JUDGE, CONTROLS, ENGINE, COST, SPREAD, OUTPUT)
UNGROUPED = "Options"

COL_MAX = 26  # the option column's width: past it, the help starts on the next line
# A value's name by its type, when the option names none.
_METAVARS = {"int": "N", "int range": "N", "float": "NUM", "float range": "NUM",
             "path": "PATH", "str": "TEXT", "list[str]": "TEXT"}


class PanelCommand(TyperCommand):
    """A command whose --help lists its options panel by panel."""

    # Typed loosely: typer vendors its own click (typer._click), whose Context and
    # HelpFormatter are private types; the methods called are click's.
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """`[OPTIONS] RUN_DIR` (typer writes `{run_dir}`): the names the Arguments list."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = _argument_name(param) + ("..." if param.nargs == -1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_help_text(self, ctx: Any, formatter: Any) -> None:
        """The command's description, wrapped between words (click breaks "lmms-eval")."""
        text = (self.help or "").split("\f")[0].strip()
        if text:
            formatter.write_paragraph()
            width = max(formatter.width - formatter.current_indent - 2, 20)
            for i, paragraph in enumerate(text.split("\n\n")):
                formatter.write("\n" if i else "")
                for line in textwrap.wrap(" ".join(paragraph.split()), width,
                                          break_long_words=False, break_on_hyphens=False):
                    formatter.write(f"{' ' * (formatter.current_indent + 2)}{line}\n")

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {}
        params = [p for p in self.get_params(ctx) if not getattr(p, "hidden", False)]
        named = {getattr(p, "rich_help_panel", None) for p in params}
        for param in params:
            if param.param_type_name == "argument":
                arguments.append((_argument_name(param), _help(param, ctx)))
                continue
            panel = getattr(param, "rich_help_panel", None)
            if param.name == "help" and panel is None and OUTPUT in named:
                panel = OUTPUT  # --help closes the output panel rather than opening one
            panels.setdefault(panel or UNGROUPED, []).append(
                (_option_names(param, ctx), _help(param, ctx)))
        # One column width for every panel, so the help texts line up down the page.
        rows = [row for panel in panels.values() for row in panel] + arguments
        width = min(max((len(name) for name, _ in rows), default=0), COL_MAX)
        if arguments:
            with formatter.section("Arguments"):
                write_rows(formatter, arguments, width)
        for title in panel_order(list(panels)):
            with formatter.section(title):
                write_rows(formatter, panels[title], width)


def write_rows(formatter: Any, rows: list[tuple[str, str]], name_width: int) -> None:
    """Each option and its help, the help wrapped at the formatter's width between words
    only: never inside a word, a hyphenated name or a `[default: ...]`, so nothing is cut
    (click's write_dl breaks "salbench-vlm" at its hyphen)."""
    indent = " " * formatter.current_indent
    column = name_width + 2
    text_width = max(formatter.width - formatter.current_indent - column, 20)
    for name, text in rows:
        # Spaces inside [...] hold while wrapping: a default that fits a line stays whole.
        held = re.sub(r"\[[^\]]*\]", lambda m: m.group(0).replace(" ", "\0")
                      if len(m.group(0)) <= text_width else m.group(0), text)
        lines = [line.replace("\0", " ") for line in textwrap.wrap(
            held, text_width, break_long_words=False, break_on_hyphens=False)] or [""]
        if len(name) > name_width:  # a long name: its help starts on the next line
            formatter.write(f"{indent}{name}\n")
        else:
            formatter.write(f"{indent}{name.ljust(column)}{lines.pop(0)}".rstrip() + "\n")
        for line in lines:
            formatter.write(f"{indent}{' ' * column}{line}\n")


def panel_order(titles: list[str]) -> list[str]:
    """Options without a panel, then the command's own panels as they come, then the shared
    ones in `ORDER`."""
    def key(title: str) -> tuple[int, int]:
        if title == UNGROUPED:
            return (0, 0)
        if title in ORDER:
            return (2, ORDER.index(title))
        return (1, titles.index(title))

    return sorted(titles, key=key)


class PanelTyper(typer.Typer):
    """A typer app whose commands list their options in panels (`PanelCommand`)."""

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None,
                **kwargs: Any) -> Any:
        return super().command(name, cls=cls or PanelCommand, **kwargs)


def _argument_name(param: Any) -> str:
    return str(param.metavar or (param.name or "").upper())


def _option_names(param: Any, ctx: Any) -> str:
    """`--flag VALUE` (or `-v, --verbose`, `--x / --no-x`) as the option column shows it."""
    names = ", ".join(sorted(param.opts, key=lambda o: len(o) - len(o.lstrip("-"))))
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if param.is_flag or param.count:
        return names
    return f"{names} {value_name(param, ctx)}"


def value_name(param: Any, ctx: Any) -> str:
    """The option's own metavar, a short name for its type, or its choices."""
    if param.metavar:
        return str(param.metavar)
    shown = str(param.display_type(ctx) or "")
    return _METAVARS.get(shown.strip("<>"), shown if shown.startswith("<") else "VALUE")


def _help(param: Any, ctx: Any) -> str:
    text = " ".join((param.help or "").split())
    extra = []
    default = shown_default(param)
    if default is not None:
        extra.append(f"default: {default}")
    if getattr(param, "required", False):
        extra.append("required")
    return f"{text}  [{'; '.join(extra)}]" if extra else text


def shown_default(param: Any) -> str | None:
    """What --help says an option defaults to: the text it declares (`show_default="..."`,
    for an option whose default the code applies), else its value; nothing for an off flag
    or an option that has none."""
    show = getattr(param, "show_default", True)
    if isinstance(show, str):
        return show
    if show is False:
        return None
    value = param.default
    if getattr(param, "is_flag", False):
        if param.secondary_opts:  # --x / --no-x: the spelling that is in force
            return (param.opts if value else param.secondary_opts)[0].lstrip("-")
        return None
    if value is None or callable(value) or value == [] or value == ():
        return None
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list | tuple):
        return ", ".join(str(v.value if isinstance(v, Enum) else v) for v in value)
    return str(value)
