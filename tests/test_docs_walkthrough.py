"""The README and then every page, in the order the README names them, on one fresh clone and
one machine, as a newcomer follows them: every step this machine can run runs as written and
ends as the page says (exit code 0, or the one a `# ... exit code N` comment after it
promises). The `visioneval loopback` and `visioneval view` servers the pages start are real
processes on the ports the pages name, left running from page to page as a reader leaves
them, so a page that starts a server on a port an earlier page holds fails here.

Which steps are left out is a rule, `docs_walkthrough.why_not_run`, not a list: a hosted
model (a key and the network), a server on another machine, a placeholder for the reader's
own value, a download, a Ray cluster, a command other than visioneval's (pytest, the
measurement scripts, vLLM), and runs or logs no earlier step made (a hosted model's runs,
another tool's logs). The test prints every step it left out, with the reason.

Sizes: to stay well under two minutes on a busy 2-core machine, a `visioneval data synth-*`
step writes at most SIZES[its generator] rows per config (`--n`); every step is otherwise the
page's command, in the page's order. Steps run in this process (the `visioneval` command
tree, as the shell would call it); servers run as `python -m visioneval` processes."""

from __future__ import annotations

import glob
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import invoke
from docs_walkthrough import (
    LOCAL_URL,
    ROOT,
    Step,
    ignored_at_root,
    loopback_ports,
    reading_order,
    server_default_port,
    steps,
    takes,
    why_not_run,
)

from visioneval.report.viewer import NEXT_PORTS

# The most rows per config (`--n`) a data step writes here; the pages' own sizes are for
# readers, whose figures the pages quote (psychophysics: trials per level and stimulus).
SIZES = {"synth-salbench": 50, "synth-psychophysics": 2, "synth-layout": 5,
         "synth-illusionbench": 24, "synth-crowding": 2}
READY = re.compile(r"http://127\.0\.0\.1:(\d+)")


def fresh_clone(dest: Path) -> Path:
    """The repository's files as a clone has them (git's tracked and new, not ignored,
    files): no results/, no data/, no caches."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return dest


def sized(args: list[str]) -> list[str]:
    """`data synth-X --n N` with N at most SIZES[synth-X] (see the module's docstring)."""
    if args[:1] != ["data"] or "--n" not in args or args[1] not in SIZES:
        return args
    at = args.index("--n") + 1
    return [*args[:at], str(min(int(args[at]), SIZES[args[1]])), *args[at + 1:]]


def expanded(args: list[str], folder: Path) -> list[str]:
    """Wildcards as the shell expands them: the matching paths, sorted; a pattern that
    matches nothing stays as written."""
    out = []
    for arg in args:
        found = sorted(glob.glob(arg, root_dir=folder)) if glob.has_magic(arg) else []
        out += found or [arg]
    return out


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def any_free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Servers:
    """The pages' servers, each a `visioneval` process in the clone, stopped with Ctrl-C at
    the end. A port another program on this machine holds (another test session) is swapped
    for a free one, in every later step that names it and in the clone's example files; a
    port an earlier page's server holds is not: that is the collision this test is for."""

    def __init__(self, clone: Path, logs: Path):
        self.clone, self.logs = clone, logs
        self.running: dict[int, tuple[Step, subprocess.Popen]] = {}
        self.moved: dict[int, int] = {}

    def start(self, step: Step) -> None:
        port = step.port()
        if step.argv[1] == "view" and "--port" not in step.args:
            # view's own choice: the first of the ten after its default that no view holds
            port = next(p for p in range(port, port + NEXT_PORTS) if p not in self.running)
        assert port not in self.running, (f"{step}: port {port} is held by the server "
                                          f"{self.running[port][0]}")
        if not port_is_free(port):
            self._move(port, any_free_port())
        args = self.named(step.args)
        if "--port" not in args:
            args += ["--port", str(self.moved.get(port, port))]
        log = self.logs / f"server-{port}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "visioneval", *args],
                                    cwd=self.clone, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.running[port] = (step, proc)
        deadline = time.monotonic() + 60
        while not READY.search(log.read_text()):
            assert proc.poll() is None, f"{step}: the server ended:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"{step}: no address printed in 60 s"
            time.sleep(0.05)

    def _move(self, port: int, new: int) -> None:
        self.moved[port] = new
        for path in (self.clone / "examples").rglob("*"):
            if path.suffix in (".toml", ".yaml", ".json", ".jsonl", ".py"):
                text = path.read_text()
                if f"127.0.0.1:{port}" in text:
                    path.write_text(text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{new}"))

    def named(self, args: list[str]) -> list[str]:
        """The arguments with every moved port replaced."""
        def swap(arg: str) -> str:
            return LOCAL_URL.sub(lambda m: m.group(0).replace(
                m.group(1), str(self.moved.get(int(m.group(1)), int(m.group(1))))), arg)

        out = [swap(a) for a in args]
        for i, arg in enumerate(out[:-1]):
            if arg == "--port" and out[i + 1].isdigit():
                out[i + 1] = str(self.moved.get(int(out[i + 1]), int(out[i + 1])))
        return out

    def ended(self) -> list[str]:
        return [f"{step} (exit {proc.returncode})" for step, proc in self.running.values()
                if proc.poll() is not None]

    def stop(self) -> None:
        """Ctrl-C to each, as a reader stops them; a process that ignores it (started from a
        shell that ignores SIGINT) is terminated after five seconds in all."""
        procs = [proc for _, proc in self.running.values()]
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 5
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_every_page_in_order_on_one_fresh_clone(tmp_path, monkeypatch):
    clone = fresh_clone(tmp_path / "clone")
    before = {p.name for p in clone.iterdir()}
    monkeypatch.chdir(clone)
    servers = Servers(clone, tmp_path)
    ran: list[Step] = []
    left_out: list[tuple[Step, str]] = []
    try:
        for page in reading_order():
            for step in steps(page):
                why = why_not_run(step, clone)
                if why is not None:
                    left_out.append((step, why))
                    continue
                if step.serves:
                    servers.start(step)
                else:
                    args = sized(expanded(servers.named(step.args), clone))
                    if takes(args, "--no-progress"):
                        args.append("--no-progress")
                    result = invoke(*args)
                    assert result.exit_code == step.exit_code, (
                        f"{step}\nexit code {result.exit_code}, the page says "
                        f"{step.exit_code}:\n{result.output}")
                ran.append(step)
        assert not servers.ended(), f"servers that stopped: {servers.ended()}"
    finally:
        servers.stop()
    print("\nleft out:\n" + "\n".join(f"  {step}\n    {why}" for step, why in left_out))
    started = {port for page in reading_order() for port, step in loopback_ports(page).items()
               if step in ran}
    assert started == {s.port() for s in ran if s.serves and s.argv[1] == "loopback"}
    assert len(started) >= 10 and len(ran) >= 60, (len(started), len(ran))
    pages_with_steps = {s.page for s in ran}
    assert {p.name for p in pages_with_steps} >= {
        "README.md", "psychophysics.md", "controls.md", "probe.md", "suites.md", "vqa.md",
        "evaluators.md", "judge-checks.md", "power.md", "reference.md", "cost.md", "batch.md"}
    written = {p.name for p in clone.iterdir()} - before
    assert written and written <= ignored_at_root(), written - ignored_at_root()


def test_the_sizes_rule_keeps_the_command():
    assert sized(["data", "synth-salbench", "--out", "data/x", "--n", "200"]) == [
        "data", "synth-salbench", "--out", "data/x", "--n", "50"]
    assert sized(["data", "synth-salbench", "--out", "data/x", "--n", "8"])[-1] == "8"
    assert sized(["salbench", "--n", "200"]) == ["salbench", "--n", "200"]
    assert set(SIZES) <= {f"synth-{name}" for name in (
        "salbench", "psychophysics", "layout", "illusionbench", "crowding")}
    assert shlex.join(sized(["data", "synth-layout", "--n", "3"])) == "data synth-layout --n 3"


def test_no_two_pages_start_a_server_on_one_port():
    """Each page's loopback servers have ports of their own, none of them `visioneval
    view`'s default; every 127.0.0.1 address a page's steps call is a server that page
    starts (a page never leans on another page's server)."""
    owner: dict[int, Step] = {}
    view_port = server_default_port("view")
    for page in reading_order():
        ports = loopback_ports(page)
        for port, step in ports.items():
            assert port != view_port, f"{step}: {port} is visioneval view's default port"
            assert port not in owner, f"{step}: port {port} is {owner[port]}'s already"
            owner[port] = step
        for step in steps(page):
            for port in map(int, LOCAL_URL.findall(" ".join(step.argv))):
                assert port in ports, (f"{step}: calls 127.0.0.1:{port}, which this page "
                                       "starts no server on")
    assert len(owner) >= 10


def test_the_glossary_table_lists_every_page_port():
    """docs/glossary.md's table of ports is the ports the pages start their servers on."""
    text = (ROOT / "docs" / "glossary.md").read_text()
    listed: dict[int, str] = {}
    for row in re.findall(r"^\| ([\d, ]+) \| (.+?) \|", text, re.MULTILINE):
        for port in row[0].split(","):
            listed[int(port)] = row[1]
    view_port = server_default_port("view")
    assert view_port in listed and "report.md" in listed[view_port]
    shown = {port: page for page in reading_order() for port in loopback_ports(page)}
    assert set(listed) - {view_port} == set(shown)
    for port, page in shown.items():
        name = "README" if page.name == "README.md" else page.name
        assert name in listed[port], f"port {port}: the glossary says {listed[port]}"


def test_example_files_show_the_commands_their_page_shows():
    """A commented command at the head of an example file (how to try it) is a command a
    page shows, word for word, so the two cannot drift apart (ports, data folders)."""
    shown = {" ".join(s.argv) for page in reading_order() for s in steps(page)}
    heads = 0
    for path in sorted((ROOT / "examples").rglob("*")):
        if path.suffix not in (".toml", ".yaml", ".py") or not path.is_file():
            continue
        comment = "\n".join(line.lstrip("#").strip() for line in
                            path.read_text().splitlines() if line.startswith("#   "))
        for raw in comment.replace("\\\n", " ").splitlines():
            if raw.startswith("uv run visioneval "):
                argv = shlex.split(raw, comments=True)
                line = " ".join(argv[2:-1] if argv[-1] == "&" else argv[2:])
                assert line in shown, f"{path.relative_to(ROOT)}: `{raw}` is on no page"
                heads += 1
    assert heads >= 5
