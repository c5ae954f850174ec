"""Every command the README and the docs show is a command visioneval takes, and the ones
that need no model server abroad really run, in the order a reader meets them.

docs/evaluators.md has its own test (`test_docs_evaluators.py`), which also runs its judge
examples against the scripted loopback judge."""

from __future__ import annotations

import functools
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
from docs_walkthrough import ignored_at_root, loopback_ports

from visioneval.cli import app
from visioneval.loopback.server import answer_popout

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md")
                                     if p.name != "evaluators.md")]
INLINE = re.compile(r"`((?:uv run )?visioneval [^`]+)`")
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


@functools.cache
def _click_command() -> click.Command:
    """Built once: typer builds it from the app's signatures (about 20 ms a time)."""
    return typer.main.get_command(app)


def parse_only(argv: list[str]) -> None:
    """Parse `argv` as the command line would, without running it: unknown commands or
    options and values of the wrong type raise click's errors."""
    command: click.Command = _click_command()
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


@functools.cache
def stand_ins() -> tuple[str, ...]:
    """The addresses of the docs' loopback servers that answer as the popout baseline or by
    a checksum of the prompt, for which one test server answering as popout can stand in
    (the scripted judges, the observer and the canary reader cannot)."""
    found = []
    for page in PAGES:
        for port, step in loopback_ports(page).items():
            args = step.args
            answer = args[args.index("--answer") + 1] if "--answer" in args else "popout"
            if answer in ("popout", "hash"):
                found.append(f"127.0.0.1:{port}")
    return tuple(found)


def runs_offline(argv: list[str]) -> bool:
    """Commands that need no model server but the loopback, no download and no key."""
    name = argv[0]
    if name in ("demo", "data", "validate", "layout"):
        return True
    if name in ("evaluate", "report", "compare", "loopback"):
        return False  # evaluate: its own test; the others need a run or serve forever
    backend = argv[argv.index("--backend") + 1] if "--backend" in argv else None
    local_model = backend == "builtin" or any(lb in a for a in argv for lb in stand_ins())
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


def offline_steps(page: Path) -> list[tuple[int, list[str]]]:
    """The commands of a page the offline tests run, in order: the fenced ones that need no
    model server abroad, and the inline `data` commands that write (with `--out`, no
    placeholder) the data a fenced example reads (README: `data synth-salbench`)."""
    fenced = {(line, tuple(argv)) for line, argv in commands(page, inline=False)}
    return [(line, argv) for line, argv in commands(page) if runs_offline(argv) and (
        (line, tuple(argv)) in fenced
        or (argv[0] == "data" and "--out" in argv and not any(PLACEHOLDER.match(a)
                                                              for a in argv)))]


def run_steps(page: Path, port: int) -> int:
    """Run a page's offline steps in the current folder, the docs' loopback servers
    being the test server on `port`; how many ran."""
    ran = 0
    for line, argv in offline_steps(page):
        for loopback in stand_ins():
            argv = [a.replace(loopback, f"127.0.0.1:{port}") for a in argv]
        extra = ["--no-progress"] if argv[0] not in ("data", "validate", "layout") else []
        result = invoke(*argv, *extra)
        promised = 1 if argv[0] == "validate" else 0  # the README's count example fails
        assert result.exit_code == promised, (f"{page.name}:{line}: visioneval "
                                              f"{shlex.join(argv)}\n{result.output}")
        ran += 1
    return ran


# The pages whose examples take seconds: the walkthrough (test_docs_walkthrough.py) runs
# them, on one fresh clone in reading order, and they are not run a second time here.
SLOW_PAGES = ("layout.md", "PERFORMANCE.md", "psychophysics.md",  # pictures; 1000 rows; fits
              "controls.md", "power.md",  # 800 requests; a pilot run
              "pope.md",  # 720 requests through two models
              "suites.md", "cost.md", "naturalbench.md",  # several runs each
              "explain.md", "blindtest.md",  # a run with a variant; six threshold fits
              "epochs.md",  # 720 requests, images made for them
              "crowding.md",  # 324 stimuli drawn and read from their pixels
              "vernier.md", "paradigms.md",  # 144 stimuli drawn, two runs fitted
              "contrast.md",  # 720 dithered stimuli drawn and read
              "touching.md",  # 576 stimuli drawn, four fits with 3000 refits each
              "numerosity.md",  # 288 stimuli drawn, two bootstrapped fits a run
              "illusions.md",  # six curves' stimuli drawn, read and fitted
              "graphical.md",  # 720 charts drawn, then read from their pixels
              "human.md")  # 144 stimuli drawn and read


def reads_another_pages_data(page: Path) -> bool:
    """Whether a step of the page reads a data folder another page writes (reference.md
    reads the README's `data/synth`): such a page runs after that one, in the walkthrough."""
    steps = offline_steps(page)
    written = {argv[argv.index("--out") + 1].rstrip("/") for _, argv in steps
               if argv[0] == "data" and "--out" in argv}
    read = {m for _, argv in steps if argv[0] != "data" for a in argv
            for m in re.findall(r"\bdata/[\w.-]+", a)}
    return bool(read - written)


@pytest.mark.parametrize("page", [
    p for p in PAGES[1:] if offline_steps(p) and not reads_another_pages_data(p)
    and p.name not in SLOW_PAGES], ids=lambda p: p.name)
def test_offline_examples_run(page, serve, tmp_path, monkeypatch):
    """Run in a fresh folder with the repository's examples beside it; the loopback models
    the docs start (popout or checksum answers) are one test server on a free port. The
    README, and every page with the servers it names, run in order on one fresh clone in
    test_docs_walkthrough.py."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    assert run_steps(page, serve(answer=answer_popout).port)


def test_the_slow_pages_run_in_the_walkthrough_on_their_own_data():
    """A slow page is left to the walkthrough only when it needs no other page's data, so
    running it in reading order proves what running it alone would (and it has steps)."""
    for name in SLOW_PAGES:
        page = ROOT / "docs" / name
        assert page.is_file(), name
        assert offline_steps(page), f"{name}: no offline step: not a slow page"
        assert not reads_another_pages_data(page), f"{name} reads another page's data"


def writes(argv: list[str]) -> str | None:
    """Where a command writes, as the page gives it (`--out`), when that is a relative
    path and no placeholder (a page's own folder, not a reader's DIR or a cluster's)."""
    if "--out" not in argv:
        return None
    out = argv[argv.index("--out") + 1]
    if out.startswith(("/", "$")) or PLACEHOLDER.search(out):
        return None
    return out


def test_each_page_writes_its_own_folders_under_data_and_results():
    """Data written by `visioneval data synth-*` goes to data/<the page's own folder> and
    everything else to results/, both ignored by git; no page writes a data folder that
    the README or another page writes (its runs could no longer resume, their reports would
    lose their thumbnails)."""
    data_owner: dict[str, str] = {}
    for page in PAGES:
        for line, argv in commands(page):
            out = writes(argv)
            if out is None:
                continue
            where = f"{page.name}:{line}"
            if argv[0] == "data":
                assert out.startswith("data/"), f"{where}: --out {out} is not under data/"
                folder = out.rstrip("/")
                assert folder not in data_owner, (f"{where}: {folder} is written by "
                                                  f"{data_owner[folder]} too")
                data_owner[folder] = where
            else:
                assert out.startswith("results/"), f"{where}: --out {out} is not under results/"
    assert {"data", "results"} <= ignored_at_root()
