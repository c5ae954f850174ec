"""How this process was started, so a printed command ("continue with: ... --resume DIR")
starts the way the user's did and works when pasted: `uv run visioneval ...` under uv,
`python -m visioneval ...` when started as a module, else `visioneval ...` (or the script's
path when `visioneval` on PATH is another one).

This only shapes printed text: nothing visioneval does depends on it. It reads the process's
own command line and, to tell `uv run` apart, the variable uv sets in the processes it starts
(`UV_RUN_RECURSION_DEPTH`) together with, where /proc exists, whether the parent process is
uv itself (a command run from a shell that `uv run` started is not run by uv)."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROGRAM = "visioneval"
UV_MARK = "UV_RUN_RECURSION_DEPTH"  # set by `uv run` (uv 0.4 onwards) in what it starts


@dataclass(frozen=True)
class Started:
    """What the command line and environment say about how this process started."""

    orig_argv: Sequence[str]  # sys.orig_argv: the interpreter and its own options too
    argv0: str  # sys.argv[0]: the script's path, or __main__.py's for `python -m`
    uv_mark: bool  # the environment carries uv's mark
    parent_is_uv: bool | None  # None: not known (no /proc)
    on_path: str | None  # what `visioneval` resolves to on PATH


@functools.cache
def command_prefix() -> str:
    """The words that start a visioneval command as this process was started; read once
    per process."""
    return prefix(Started(tuple(sys.orig_argv), sys.argv[0] if sys.argv else "",
                          UV_MARK in os.environ, _parent_is_uv(), shutil.which(PROGRAM)))


def command(*words: object) -> str:
    """`visioneval WORDS...` spelled as this process was started; each word quoted for a
    POSIX shell when it needs to be (a path with a space)."""
    return " ".join([command_prefix(), *(shlex.quote(str(w)) for w in words)])


def prefix(started: Started) -> str:
    """`command_prefix` for a given start (separate so it can be checked for each case)."""
    interpreter = _interpreter(started.orig_argv)
    script = Path(started.argv0).name in (PROGRAM, f"{PROGRAM}.exe")
    if interpreter is None and not script:
        return PROGRAM  # imported (visioneval.run from Python, tests): the usual spelling
    if started.uv_mark and started.parent_is_uv is not False:
        if interpreter is None:
            return f"uv run {PROGRAM}"
        return shlex.join(["uv", "run", "python", *interpreter[1:], "-m", PROGRAM])
    if interpreter is not None:
        return shlex.join([*interpreter, "-m", PROGRAM])
    if started.on_path and _same_file(started.on_path, started.argv0):
        return PROGRAM
    return shlex.quote(started.argv0)


_TAKES_VALUE = ("-X", "-W", "--check-hash-based-pycs")  # the interpreter's options with one


def _interpreter(orig_argv: Sequence[str]) -> list[str] | None:
    """For `python [options] -m visioneval ...`: the interpreter and its options as given;
    None when this process is not visioneval run as a module."""
    words = list(orig_argv[1:])
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-m" or (word.startswith("-m") and len(word) > 2):
            module = words[i + 1] if word == "-m" and i + 1 < len(words) else word[2:]
            return [orig_argv[0], *words[:i]] if module == PROGRAM else None
        if not word.startswith("-") or word in ("-c", "-"):
            return None
        i += 2 if word in _TAKES_VALUE else 1
    return None


def _parent_is_uv() -> bool | None:
    try:
        return Path(os.readlink(f"/proc/{os.getppid()}/exe")).name in ("uv", "uv.exe")
    except OSError:
        return None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False

