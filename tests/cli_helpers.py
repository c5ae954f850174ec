"""Running the real `visioneval` command, in-process (CliRunner) or as a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from visioneval.cli import app


def invoke(*args: str):
    """Run `visioneval ARGS` in-process; returns the click Result (exit_code, stdout, stderr)."""
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def flat(text: str) -> str:
    """Printed text as one line: a sentence wrapped at the terminal's width and a command
    continued with a backslash read as the shell and a reader read them."""
    return " ".join(text.replace("\\\n", " ").split())


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


class Viewing:
    """`visioneval view ARGS --port 0` in a subprocess (in `cwd`), asked over HTTP and
    stopped with Ctrl-C (SIGINT); `port` None: no --port (view's own choice)."""

    def __init__(self, *args: object, cwd: Path | None = None, port: int | None = 0):
        given = ["--port", str(port)] if port is not None else []
        self.proc = spawn("view", *map(str, args), *given, cwd=cwd)
        assert self.proc.stdout is not None
        for _ in range(5):
            line = self.proc.stdout.readline()
            if match := re.search(r"serving (http://127\.0\.0\.1:\d+/)", line):
                self.url = match.group(1)
                return
        self.proc.kill()
        raise AssertionError(f"view did not start: {self.proc.communicate()}")

    def get(self, path: str) -> tuple[int, str, bytes]:
        """(status, content type, body) of GET url/path."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as r:
                return r.status, r.headers.get_content_type(), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, "", exc.read()

    def rows(self, **query) -> dict:
        status, kind, body = self.get("api/rows?" + urllib.parse.urlencode(query))
        assert status == 200 and kind == "application/json"
        return json.loads(body)

    def stop(self) -> tuple[int, str]:
        """(exit code, stderr) once Ctrl-C has stopped it."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err
