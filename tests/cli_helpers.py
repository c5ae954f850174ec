"""Running the real `visioneval` command, in-process (CliRunner) or as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from visioneval.cli import app


def invoke(*args: str):
    """Run `visioneval ARGS` in-process; returns the click Result (exit_code, stdout, stderr)."""
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def spawn(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "visioneval", *map(str, args)], cwd=cwd,
                            env={**os.environ, **(env or {})}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def salbench_args(server, data: Path, out: Path, *extra: str, backend: str = "openai"):
    base = server.base_url + ("/v1" if backend in ("openai", "openrouter") else "")
    return ["salbench", "--backend", backend, "--base-url", base, "--model", "m",
            "--data-dir", data, "--out", out, "--no-progress", "--backoff-base", "0.01",
            "--backoff-cap", "0.05", *extra]


def load(run: Path, name: str = "metrics.json"):
    return json.loads((run / name).read_text())


def journal(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
