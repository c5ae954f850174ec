"""Every command the README and the docs show is a command visioneval takes, and the ones
that need no model server abroad really run, in the order a reader meets them.

docs/evaluators.md has its own test (`test_docs_evaluators.py`), which also runs its judge
examples against the scripted loopback judge."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
import typer
import yaml
from cli_helpers import invoke
from docs_examples import fenced_blocks, shell_commands

from visioneval.cli import app
from visioneval.loopback.server import answer_popout

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md")
                                     if p.name != "evaluators.md")]
INLINE = re.compile(r"`((?:uv run )?visioneval [^`]+)`")
LOOPBACKS = ("127.0.0.1:8765", "127.0.0.1:8767")  # the docs' `visioneval loopback` servers
PLACEHOLDER = re.compile(r"^[A-Z_]+$|<\w+>")  # DIR, N, RUN_DIR, <time>


def commands(page: Path, inline: bool = True) -> list[tuple[int, list[str]]]:
    """(line, argv after `visioneval`) for each visioneval command of a page, fenced in a
    bash block or (with `inline`) in the prose, in the order of the page."""
    found: list[tuple[int, list[str]]] = []
    for lang, code, line in fenced_blocks(page):
        if lang in ("bash", "sh", "shell"):
            found += [(line, c.argv) for c in shell_commands(code)]
    for number, text in enumerate(page.read_text().splitlines(), 1):
        found += [(number, shlex.split(m)) for m in INLINE.findall(text) if inline]
    out = []
    for line, argv in sorted(found, key=lambda item: item[0]):
        argv = argv[2:] if argv[:2] == ["uv", "run"] else argv
        if argv[:1] == ["visioneval"] and len(argv) > 1:
            out.append((line, argv[1:]))
    return out


def parse_only(argv: list[str]) -> None:
    """Parse `argv` as the command line would, without running it: unknown commands or
    options and values of the wrong type raise click's errors."""
    command: click.Command = typer.main.get_command(app)
    args = list(argv)
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        sub = command.get_command(click.Context(command), args[0])
        assert sub is not None, f"no command {args[0]!r}"
        command, args = sub, args[1:]
    if "--help" in args or "--version" in args:
        return
    try:
        command.make_context(command.name or "visioneval", args)
    except click.BadParameter as exc:
        if "does not exist" not in str(exc):  # a placeholder path is fine
            raise


def runs_offline(argv: list[str]) -> bool:
    """Commands that need no model server but the loopback, no download and no key."""
    name = argv[0]
    if name in ("demo", "data", "validate", "layout"):
        return True
    if name in ("evaluate", "report", "compare", "loopback"):
        return False  # evaluate: its own test; the others need a run or serve forever
    backend = argv[argv.index("--backend") + 1] if "--backend" in argv else None
    local_model = backend == "builtin" or any(lb in a for a in argv for lb in LOOPBACKS)
    downloads = name in ("salbench", "illusionbench") and "--data-dir" not in argv
    return local_model and not downloads


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_documented_command_parses(page):
    for line, argv in commands(page):
        try:
            parse_only(argv)
        except (click.ClickException, AssertionError) as exc:
            raise AssertionError(f"{page.name}:{line}: visioneval {shlex.join(argv)}: "
                                 f"{exc}") from None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_json_and_yaml_examples_load(page):
    for lang, code, line in fenced_blocks(page):
        try:
            if lang == "json":
                json.loads(code)
            elif lang == "yaml":
                yaml.safe_load(code)
        except (ValueError, yaml.YAMLError) as exc:
            raise AssertionError(f"{page.name}:{line}: {exc}") from None


@pytest.mark.parametrize("page", [
    pytest.param(p, marks=[pytest.mark.slow] if p.name == "README.md" else [])  # the demo
    for p in PAGES if any(runs_offline(a) for _, a in commands(p, inline=False))],
    ids=lambda p: p.name)
def test_offline_examples_run(page, serve, tmp_path, monkeypatch):
    """Run in a fresh folder with the repository's examples beside it; the loopback model
    the docs start on ports 8765 and 8767 is a test server on a free port. Inline commands that make
    the data a fenced example reads (README: `data synth-salbench`) run first, in order."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    server = serve(answer=answer_popout)
    ran = 0
    fenced = {(line, tuple(argv)) for line, argv in commands(page, inline=False)}
    for line, argv in commands(page):
        if not runs_offline(argv) or ((line, tuple(argv)) not in fenced
                                      and (argv[0] != "data" or any(PLACEHOLDER.match(a)
                                                                    for a in argv))):
            continue
        for loopback in LOOPBACKS:
            argv = [a.replace(loopback, f"127.0.0.1:{server.port}") for a in argv]
        extra = ["--no-progress"] if argv[0] not in ("data", "validate", "layout") else []
        result = invoke(*argv, *extra)
        promised = 1 if argv[0] == "validate" else 0  # the README's count example fails
        assert result.exit_code == promised, (f"{page.name}:{line}: visioneval "
                                              f"{shlex.join(argv)}\n{result.output}")
        ran += 1
    assert ran
