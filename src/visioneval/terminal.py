"""The terminal as visioneval draws it: at most 100 columns however wide the window, text
printed as written (no emoji codes such as `:-1` turned into pictures), long sentences
wrapped at spaces. Every console visioneval makes comes from `console`."""

from __future__ import annotations

import logging
import re
import shlex
import textwrap
from typing import IO, Any

from rich.console import Console, ConsoleDimensions
from rich.text import Text

WIDTH = 100
"""The widest line visioneval prints: tables, sentences and progress bars fit it."""
_KEYED = re.compile(r" +\S.{0,30}?  +(?=\S)")  # "  input tokens    ~2,612 (...)": its value


class Terminal(Console):
    """A rich console no wider than `WIDTH` (narrower when the window is). Written to a
    file or a pipe (a log, CI), where rich would assume 80 columns, it is `WIDTH` wide
    unless a width is given (`COLUMNS`, `width=`)."""

    @property
    def size(self) -> ConsoleDimensions:
        found = Console.size.fget(self)  # type: ignore[attr-defined]
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(WIDTH, found.height)
        return ConsoleDimensions(min(found.width, WIDTH), found.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def console(*, stderr: bool = False, file: IO[str] | None = None, quiet: bool = False,
            **options: Any) -> Terminal:
    """A console for visioneval's output: stdout (results) or stderr (progress and logs),
    or `file`; emoji codes off, so a value such as `jpeg:-1` prints as written."""
    return Terminal(stderr=stderr, file=file, quiet=quiet, emoji=False, **options)


def line(out: Console, text: str, style: str | None = None) -> None:
    """One sentence of plain text (never markup), wrapped at spaces to the console's width;
    an indented line or a list item ("- ...", "* ...", "  FLAG ...", "  cost    $0.01 ...")
    wraps onto lines indented under its text."""
    lead = len(text) - len(text.lstrip(" "))
    word = text[lead:].split(" ", 1)[0]
    keyed = _KEYED.match(text) if lead else None
    hang = len(keyed.group(0)) if keyed else \
        lead + (len(word) + 1 if word in ("-", "*", "FLAG") else 0)
    if not hang or len(text) <= out.width:
        out.print(text, style=style, markup=False, highlight=False, emoji=False)
        return
    for part in textwrap.wrap(text, width=out.width, subsequent_indent=" " * hang,
                              break_on_hyphens=False, drop_whitespace=True):
        out.print(part, style=style, markup=False, highlight=False, emoji=False,
                  soft_wrap=True)


def error_line(out: Console, message: str) -> None:
    """"error: MESSAGE" on one unwrapped line (an error is one line to read, grep and
    paste), the word in bold red, the message as written (never markup: a value such as
    "visioneval[ray]" or a path holding "[bold]" prints as it is)."""
    text = Text("error:", style="bold red")
    text.append(f" {message}")
    out.print(text, highlight=False, emoji=False, soft_wrap=True)


def warning_line(out: Console, message: str) -> None:
    """"warning: MESSAGE" in yellow on one unwrapped line, as written (a warning, like an
    error, is one line to read and grep)."""
    out.print(f"warning: {message}", style="yellow", markup=False, highlight=False,
              emoji=False, soft_wrap=True)


def command_lines(lead: str, command: str, width: int = WIDTH) -> list[str]:
    """`lead` and a command a user may paste, as lines of at most `width` columns: one line
    when both fit; else `lead` alone, then the command on a line of its own or, when it is
    wider than that, broken at spaces between its words, each line but the last ending in
    a backslash (a shell joins them). A single word wider than the line (a very long path)
    is never broken."""
    if len(lead) + len(command) + 1 <= width:
        return [f"{lead} {command}" if lead else command]
    if len(command) + 2 <= width:
        return [lead, f"  {command}"] if lead else [f"  {command}"]
    words = [shlex.quote(word) for word in shlex.split(command)]
    lines, current = [lead] if lead else [], "  "
    for word in words:
        if current.strip() and len(current) + len(word) + 2 > width:
            lines.append(current + "\\")
            current = "    "
        current += word + " "
    lines.append(current.rstrip())
    return lines


def print_command(out: Console, lead: str, command: str, style: str | None = None) -> None:
    """`command_lines` printed as they are (never re-wrapped; a long `lead` on its own
    wraps at spaces), plain text."""
    lines = command_lines(lead, command, out.width)
    if lead and lines[0] == lead:
        line(out, lead, style=style)
        lines = lines[1:]
    for text in lines:
        out.print(text, style=style, markup=False, highlight=False, emoji=False,
                  soft_wrap=True)


READ_MORE_THAN_ONCE = ("visioneval.core.store",)  # loggers of readers a command calls again


class LineHandler(logging.Handler):
    """One log record, one unwrapped line (a bad row or file is one line to read and grep),
    printed through the console the progress bar uses (so lines appear above the bar instead
    of tearing it). What a run directory's reader warns about (a torn or bad journal line)
    is said once per command, however often the command reads the directory."""

    STYLES = {"WARNING": "yellow", "ERROR": "bold red", "CRITICAL": "bold red", "DEBUG": "dim"}

    def __init__(self, console: Console):
        super().__init__()
        self.console = console
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = f"{record.levelname.lower()}: {self.format(record)}"
            if record.name in READ_MORE_THAN_ONCE:
                if line in self.said:
                    return
                self.said.add(line)
            self.console.print(line, style=self.STYLES.get(record.levelname), soft_wrap=True,
                               markup=False, highlight=False, emoji=False)
        except Exception:  # logging must never break a run
            self.handleError(record)


def setup_logging(console: Console, verbose: bool) -> None:
    logging.basicConfig(level=logging.WARNING, handlers=[LineHandler(console)],
                        format="%(message)s", force=True)
    logging.getLogger("visioneval").setLevel(logging.DEBUG if verbose else logging.INFO)
