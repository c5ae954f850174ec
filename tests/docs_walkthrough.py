"""The docs as a newcomer follows them: the pages in the order the README names them, each
page's steps, which steps need what this machine lacks, and the servers the pages start.

A page's steps are the commands of its bash blocks, in order, and the commands its prose
gives in backticks that those depend on: a `visioneval data ... --out DIR` that writes what
they read, and a `visioneval loopback` whose address they call (the README's first server).
Other backticked commands in the prose name a command or a flag; they are not steps.

`loopback` and `view` serve until Ctrl-C: a newcomer starts each in another terminal (or
with `&`) and leaves it running, so every page's servers must have ports of their own
(docs/glossary.md, "loopback server", has the table)."""

from __future__ import annotations

import functools
import glob
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from docs_examples import fenced_blocks, shell_commands

from visioneval.cli import app

ROOT = Path(__file__).parent.parent
SERVERS = ("loopback", "view")  # commands that serve until stopped
INLINE = re.compile(r"`((?:uv run )?visioneval [^`]+)`")
LOCAL_URL = re.compile(r"https?://127\.0\.0\.1:(\d+)")
ANY_URL = re.compile(r"https?://([^/:\s]+)")
# A value the reader fills in: a word in capitals of three or more (DIR, RUN_DIR, SHARD_1;
# shorter ones are values: --tasks D, --configs P3), <time>, results/run-2026...,
# path/to/file.py.
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]{2,}$|<[\w ]+>|\.\.\.|\bpath/to/")
# Commands that read runs or logs named on their command line (positional arguments).
READERS = ("compare", "show", "power", "merge", "rescore", "report", "view", "runs")


@dataclass(frozen=True)
class Step:
    """One command of a page, as the page gives it (`uv run` left out)."""

    page: Path
    line: int
    argv: tuple[str, ...]
    exit_code: int = 0
    fenced: bool = True

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def visioneval(self) -> bool:
        return self.argv[:1] == ("visioneval",) and len(self.argv) > 1

    @property
    def args(self) -> list[str]:
        """The arguments after `visioneval`."""
        return list(self.argv[1:])

    @property
    def serves(self) -> bool:
        return self.visioneval and self.argv[1] in SERVERS

    def port(self) -> int:
        """The port a server step listens on: its `--port`, else the command's default
        (`visioneval view`'s first choice: it takes the next free one when that is held)."""
        args = self.args
        if "--port" in args:
            return int(args[args.index("--port") + 1])
        return server_default_port(args[0])

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join(self.argv)}"


def reading_order() -> list[Path]:
    """README.md, then the pages it names (a link or a `docs/x.md` path) in the order it
    first names them, then the pages it does not name, by name."""
    pages = sorted((ROOT / "docs").glob("*.md"))
    named: list[Path] = []
    for name in re.findall(r"docs/([\w.-]+\.md)", (ROOT / "README.md").read_text()):
        page = ROOT / "docs" / name
        if page in pages and page not in named:
            named.append(page)
    return [ROOT / "README.md", *named, *(p for p in pages if p not in named)]


def _normalised(argv: list[str]) -> tuple[str, ...]:
    return tuple(argv[2:] if argv[:2] == ["uv", "run"] else argv)


def _fenced(page: Path) -> list[Step]:
    steps = []
    for lang, code, line in fenced_blocks(page):
        if lang in ("bash", "sh", "shell"):
            steps += [Step(page, line, _normalised(c.argv), c.exit_code)
                      for c in shell_commands(code) if c.argv]
    return steps


def _inline(page: Path) -> list[Step]:
    """The backticked commands of the page's prose (outside fenced blocks)."""
    inside: set[int] = set()
    for _, code, line in fenced_blocks(page):
        inside.update(range(line, line + code.count("\n") + 2))
    found = []
    for number, text in enumerate(page.read_text().splitlines(), 1):
        if number in inside:
            continue
        for match in INLINE.findall(text):
            try:
                argv = _normalised(shlex.split(match))
            except ValueError:
                continue
            found.append(Step(page, number, argv, fenced=False))
    return found


def placeholder(step: Step) -> bool:
    return any(PLACEHOLDER.search(a) for a in step.argv)


def steps(page: Path) -> list[Step]:
    """The page's steps in order (see the module's docstring)."""
    fenced = _fenced(page)
    called = {(s.line, int(port)) for s in fenced for a in s.argv
              for port in LOCAL_URL.findall(a)}
    served = {s.port() for s in fenced if s.serves and s.argv[1] == "loopback"}
    wanted = []
    for step in _inline(page):
        if not step.visioneval or placeholder(step):
            continue
        writes_data = step.argv[1] == "data" and "--out" in step.args
        serves_a_call = step.argv[1] == "loopback" and step.port() not in served and any(
            port == step.port() and line > step.line for line, port in called)
        if writes_data or serves_a_call:
            wanted.append(step)
    return sorted(fenced + wanted, key=lambda s: s.line)


def loopback_ports(page: Path) -> dict[int, Step]:
    """The ports the page starts loopback servers on: its loopback steps, and every
    loopback its prose gives with a `--port` (one a reader may start beside the others)."""
    found = {s.port(): s for s in steps(page) if s.serves and s.argv[1] == "loopback"}
    for step in _inline(page):
        if step.visioneval and step.argv[1] == "loopback" and "--port" in step.args \
                and not placeholder(step):
            found.setdefault(step.port(), step)
    return found


@functools.cache
def _click_app() -> Any:
    """The command tree typer builds from the app (its own click: duck-typed here)."""
    return typer.main.get_command(app)


def click_command(args: list[str]) -> tuple[Any, list[str]]:
    """The click command `visioneval ARGS` runs, and the arguments left for it."""
    command = _click_app()
    rest = list(args)
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):
        sub = command.commands.get(rest[0])
        if sub is None:
            break
        command, rest = sub, rest[1:]
    return command, rest


def server_default_port(name: str) -> int:
    """The port `visioneval NAME` (loopback, view) listens on without --port: its option's
    default, or `view`'s first choice (its option has none: 8766, else the next free)."""
    found = option_default(name, "port")
    if found is None:
        from visioneval.report.viewer import DEFAULT_PORT

        return DEFAULT_PORT
    return int(found)  # type: ignore[call-overload]


def option_default(name: str, option: str) -> object:
    command, _ = click_command([name])
    return next(p.default for p in command.params if p.name == option)


def takes(args: list[str], option: str) -> bool:
    """Whether the command `args` names has the flag `option` (`--no-progress`)."""
    command, _ = click_command(args)
    return any(option in p.opts for p in command.params)


def positionals(args: list[str]) -> list[str]:
    """The arguments of `visioneval ARGS` that are not options or their values."""
    command, rest = click_command(args)
    valued = {o for p in command.params if p.param_type_name == "option" and not p.is_flag
              for o in p.opts}
    found, skip = [], False
    for arg in rest:
        if skip:
            skip = False
        elif arg in valued:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


def why_not_run(step: Step, folder: Path) -> str | None:
    """Why this machine cannot run the step as written (None: it can). A rule, not a list:
    what it needs that a fresh clone offline does not have."""
    if not step.visioneval:
        return (f"not a visioneval command ({step.argv[0]}: the tests themselves, a "
                "measurement script, a GPU server or a shell variable)")
    if placeholder(step):
        return "a placeholder for the reader's own value"
    args = step.args
    hosts = {h for a in args for h in ANY_URL.findall(a)} - {"127.0.0.1"}
    if hosts:
        return f"a model server the pages do not start ({', '.join(sorted(hosts))})"
    backends = [args[i + 1] for i, a in enumerate(args[:-1])
                if a in ("--backend", "--judge-backend")]
    local = any(LOCAL_URL.search(a) for a in args)
    if "human" in backends:
        return "a person answering in a browser"
    if "--resume" in args and not (folder / args[args.index("--resume") + 1]).exists():
        return f"resumes {args[args.index('--resume') + 1]}, which no step before it made"
    if any(b != "builtin" for b in backends) and not local and "--dry-run" not in args:
        return "a hosted model: its API key and the network"
    if "--executor" in args and args[args.index("--executor") + 1] == "ray":
        return "a Ray cluster (the ray extra; it takes minutes to start)"
    if args[0] in ("salbench", "illusionbench") and not {"--data-dir", "--resume",
                                                          "--dry-run"} & set(args):
        return "downloads the dataset"
    if args[0] in READERS:
        missing = [p for p in positionals(args)
                   if not glob.glob(str(folder / p))]
        if missing:
            return (f"reads {', '.join(missing)}, which no step before it made (a hosted "
                    "model's runs, another tool's logs)")
    return None


def ignored_at_root() -> set[str]:
    """The top-level folders the repository's .gitignore ignores (`/name/` lines)."""
    lines = (ROOT / ".gitignore").read_text().splitlines()
    return {line.strip("/") for line in lines if re.fullmatch(r"/[\w.-]+/", line.strip())}
