"""Running a validator as a subprocess: built-in ones and users' scripts alike.

The payload goes in on stdin as JSON; the result JSON comes back on stdout. A timeout (30 s
by default), a crash, an exit code outside 0/1/2 or stdout that is not a result all become
status "error" with the reason, so a broken validator never looks like a failed answer.

Each validator runs in its own process group, and a timeout or a cancelled run kills the
whole group: `uv run x.py` leaves python as uv's child, and killing only uv left python
running. Output goes to temporary files, not pipes, so a child that keeps the script's
stdout open cannot keep the run waiting once the script itself has ended."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from visioneval.validators import BUILTIN
from visioneval.validators.result import EvalResult

TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ValidatorCommand:
    """What to execute: argv and working directory."""

    argv: tuple[str, ...]
    cwd: Path | None = field(default=None)

    @classmethod
    def builtin(cls, name: str) -> ValidatorCommand:
        if name not in BUILTIN:
            raise ValueError(f"unknown validator {name!r}; built-in: {', '.join(BUILTIN)}")
        return cls((sys.executable, "-m", f"visioneval.validators.{name}"))

    @classmethod
    def script(cls, command: str, cwd: Path | None = None) -> ValidatorCommand:
        """A user's command line, e.g. `uv run my_validator.py`."""
        argv = tuple(shlex.split(command))
        if not argv:
            raise ValueError("empty validator command")
        return cls(argv, cwd)

    def label(self) -> str:
        return " ".join(self.argv)


async def run_validator(command: ValidatorCommand, payload: dict[str, Any],
                        timeout_s: float = TIMEOUT_S) -> EvalResult:
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, \
            tempfile.TemporaryFile() as stderr:
        stdin.write(json.dumps(payload).encode())
        stdin.seek(0)
        try:
            proc = await asyncio.create_subprocess_exec(
                *command.argv, cwd=command.cwd, stdin=stdin, stdout=stdout, stderr=stderr,
                start_new_session=True)
        except OSError as exc:
            return EvalResult.error(f"cannot start `{command.label()}`: {exc.strerror or exc}")
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            _kill_group(proc)
            await proc.wait()
            return EvalResult.error(f"`{command.label()}` timed out after {timeout_s:g} s")
        except asyncio.CancelledError:
            _kill_group(proc)
            raise
        stdout.seek(0)
        stderr.seek(0)
        return interpret(command, proc.returncode, stdout.read(), stderr.read())


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the validator and everything it started (its process group, which has the
    validator's pid as id while the validator is not yet reaped)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def interpret(command: ValidatorCommand, code: int | None, out: bytes, err: bytes) -> EvalResult:
    """A result from a finished validator process, or an error saying what went wrong."""
    stderr_tail = err.decode(errors="replace").strip()[-500:]
    if code not in (0, 1, 2):
        return EvalResult.error(f"`{command.label()}` exited with code {code}",
                                stderr=stderr_tail)
    lines = [ln for ln in out.decode(errors="replace").splitlines() if ln.strip()]
    if not lines:
        return EvalResult.error(f"`{command.label()}` printed no result", stderr=stderr_tail)
    try:
        return EvalResult.model_validate_json(lines[-1])
    except ValidationError as exc:
        return EvalResult.error(f"`{command.label()}` printed something that is not a result: "
                                f"{lines[-1][:200]!r} ({exc.error_count()} problems)",
                                stderr=stderr_tail)
