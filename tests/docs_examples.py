"""The fenced examples of a Markdown page, for tests that run what the docs show.

`fenced_blocks` yields (lang, code, line) for each fenced block; `shell_commands` splits a
bash block into commands (continuation lines joined, comments dropped, a trailing `&`
noted, the exit code a following `# ... exit code N` comment promises)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
EXIT = re.compile(r"exit code (\d+)")


def fenced_blocks(path: Path) -> Iterator[tuple[str, str, int]]:
    """(language, code, line number of the opening fence) for each fenced block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = OPEN.match(lines[i])
        if not match:
            i += 1
            continue
        fence, start = match.group("fence"), i
        lang = (match.group("info").split() or [""])[0].lower()
        body: list[str] = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence)
                                      and set(lines[i].strip()) == {fence[0]}):
            body.append(lines[i])
            i += 1
        yield lang, "\n".join(body) + "\n", start + 1
        i += 1


@dataclass(frozen=True)
class Command:
    argv: list[str]
    background: bool = False
    exit_code: int = 0


def shell_commands(code: str) -> list[Command]:
    """The commands of a bash block, in order."""
    joined = code.replace("\\\n", " ")
    commands: list[Command] = []
    for raw in joined.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            promised = EXIT.search(line)
            if promised and commands:
                last = commands[-1]
                commands[-1] = Command(last.argv, last.background, int(promised.group(1)))
            continue
        argv = shlex.split(line, comments=True)
        background = bool(argv) and argv[-1] == "&"
        commands.append(Command(argv[:-1] if background else argv, background))
    return commands
