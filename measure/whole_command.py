"""The whole `visioneval salbench` command, report included, against the physical limit.

One loopback server process answers every request after 200 ms (`visioneval loopback
--answer hash --latency 0.2`); `visioneval salbench` runs N synthetic P3 samples at
`--concurrency C` with its default report, each run a fresh process and a fresh response
cache, R times. The limit is N / C x latency: the time C requests in flight at every moment
would need (1000 / 64 x 0.2 s = 3.125 s).

For each run:
- whole command: from the process's start (the harness's fork) to its exit;
- startup excluded: from the session's start (run.json rewritten with the new session, just
  before the first row is read) to the process's exit;
- request phase: the session's own `seconds` in run.json (first row read to last answer);
- after the last answer: the difference (metrics, tables, the printed summary, report.html,
  the interpreter's exit);
- CPU: the process's user + system time (wait4), split at the session's start (read from
  /proc when run.json shows the session) and at its end (run.json's `cpu_seconds`).

    uv run python measure/whole_command.py                     # 5 runs, default report
    uv run python measure/whole_command.py --before /tmp/before/src   # alternated
    uv run python measure/whole_command.py --phases            # where the end goes
    uv run python measure/whole_command.py --no-report         # the same without a page
    uv run python measure/whole_command.py --rss-sweep --n 4000    # peak RSS, N/4 to N
    uv run python measure/whole_command.py --latency 0 --phases   # the cores kept busy

`--before SRC` runs another checkout's src/ (e.g. `git archive COMMIT src | tar -x -C
/tmp/before`) alternately with this one, so both see the same load on a shared machine.
`--also NAME=SRC` adds more checkouts to the rotation (a change taken apart, say).
`--phases` adds one run of each checkout whose end-of-run steps are timed in the process
(wall and CPU per step).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from throughput import ENV, LATENCY, WARM_UP, _peak_rss_mb, make_small

TICK = os.sysconf("SC_CLK_TCK")

PHASES = r'''
import atexit, json, sys, time
marks = []

def timed(owner, name, label=None):
    """Wrap owner.name (a module's function or a class's method) to note its wall and CPU."""
    fn = getattr(owner, name, None)
    if fn is None:
        return
    def wrapper(*args, **kwargs):
        t0, c0 = time.time(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            marks.append([label or name, t0, time.time() - t0, time.process_time() - c0])
    setattr(owner, name, wrapper)

from visioneval.runs import session
from visioneval.commands import run as command
from visioneval.core import store
from visioneval.report import page, templating, thumbs
from visioneval.benchmarks.salbench import benchmark, definition
from visioneval.stats import bootstrap
timed(session, "finish")
timed(bootstrap, "replicates", "finish: summarize: bootstrap resamples")
timed(store.RunStore, "latest_lines", "journal: latest lines")
timed(store.RunStore, "open", "run.json read")
timed(benchmark.SalBench, "summarize", "finish: summarize")
timed(benchmark.SalBench, "write_tables", "finish: write_tables")
timed(command, "report", "report (printed summary and page)")
timed(benchmark.SalBench, "print_summary", "report: print_summary")
timed(page, "try_write_report", "report: try_write_report")
timed(page, "load", "page: load the run")
timed(page, "browser_data", "page: browser_data")
timed(thumbs, "collect", "page: browser_data: thumbnails")
timed(definition.SalBenchDefinition, "sections", "page: sections (tables, charts)")
timed(templating, "render", "page: templates")
timed(page, "write_atomic", "page: write")
atexit.register(lambda: print("PHASES " + json.dumps([*marks, ["atexit", time.time(), 0, 0]]),
                              file=sys.stderr, flush=True))
from visioneval.cli import main
sys.argv = ["visioneval", *sys.argv[1:]]
main()
'''


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The loopback server answering every request after `latency` seconds."""
    subprocess.run([sys.executable, "-c", WARM_UP], env=ENV, check=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "visioneval", "loopback", "--port", "0", "--answer", "hash",
         "--latency", str(latency)], stdout=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout is not None
    match = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline())
    assert match, "the loopback server did not start"
    return proc, match.group(0)


@dataclass
class Run:
    label: str
    n: int
    concurrency: int
    latency: float
    wall: float  # fork to exit
    startup: float  # fork to the session's start
    request: float  # the session's seconds
    cpu: float  # whole process
    cpu_before: float  # up to the session's start
    cpu_request: float  # the session's cpu_seconds
    load: float  # 1-minute load average at the start
    rss: float  # peak RSS MB (VmHWM)
    phases: list | None = None

    @property
    def limit(self) -> float:
        return self.n / self.concurrency * self.latency

    @property
    def after_start(self) -> float:
        return self.wall - self.startup

    @property
    def tail(self) -> float:
        return self.after_start - self.request

    @property
    def cpu_tail(self) -> float:
        return self.cpu - self.cpu_before - self.cpu_request


def _cpu_ticks(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def _watch(pid: int, run_json: Path, found: dict, stop: threading.Event) -> None:
    """Note when run.json first holds a session (its mtime) and the CPU at that moment;
    then the process's peak RSS until it exits."""
    found["rss"] = 0.0
    while not stop.is_set():
        if "session_start" not in found:
            try:
                text = run_json.read_text()
                if '"sessions": [\n' in text:
                    found["session_start"] = run_json.stat().st_mtime_ns / 1e9
                    found["cpu_before"] = _cpu_ticks(pid)
            except OSError:
                pass
        found["rss"] = max(found["rss"], _peak_rss_mb(pid) or 0.0)
        time.sleep(0.002 if "session_start" not in found else 0.02)


def run_once(label: str, cmd: list[str], env: dict[str, str], out_dir: Path, n: int,
             concurrency: int, latency: float) -> Run:
    load = os.getloadavg()[0]
    found: dict = {}
    stop = threading.Event()
    started = time.time()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        watcher = threading.Thread(target=_watch, args=(proc.pid, out_dir / "run.json", found,
                                                        stop), daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        watcher.join()
        err.seek(0)
        stderr = err.read()
    if proc.returncode not in (0, 1) or "session_start" not in found:
        raise SystemExit(f"{label} failed ({proc.returncode}):\n{stderr}")
    session = json.loads((out_dir / "run.json").read_text())["sessions"][-1]
    phases = None
    for line in stderr.splitlines():
        if line.startswith("PHASES "):
            phases = json.loads(line[7:]) + [["exit", ended, 0, 0]]
    return Run(label, session["finished"], concurrency, latency, ended - started,
               found["session_start"] - started, session["seconds"],
               usage.ru_utime + usage.ru_stime, found["cpu_before"] or 0.0,
               session["cpu_seconds"], load, found["rss"], phases)


def command(url: str, data: Path, out_dir: Path, cache: Path, concurrency: int,
            report: bool) -> list[str]:
    return ["salbench", "--backend", "openai", "--base-url", url + "/v1", "--model", "m",
            "--data-dir", str(data), "--configs", "P3", "--concurrency", str(concurrency),
            "--no-progress", "--out", str(out_dir), "--cache-dir", str(cache),
            *([] if report else ["--no-report"])]


def summary(runs: list[Run]) -> str:
    """One line per run, then the medians and the spread."""
    head = ("| run | load | whole s | startup s | request s | after last answer s | "
            "limit / whole | limit / startup excluded | limit / request | CPU s | "
            "CPU after last answer s | peak RSS MB |")
    lines = [head, "|" + "---|" * 12]

    def row(name: str, load: float, values: list[float]) -> str:
        return f"| {name} | {load:.1f} | " + " | ".join(
            f"{v:.3f}" if i in (4, 5, 6) else f"{v:.0f}" if i == 9 else f"{v:.2f}"
            for i, v in enumerate(values)) + " |"

    def values(r: Run) -> list[float]:
        return [r.wall, r.startup, r.request, r.tail, r.limit / r.wall,
                r.limit / r.after_start, r.limit / r.request, r.cpu, r.cpu_tail, r.rss]

    for i, r in enumerate(runs, 1):
        lines.append(row(f"{r.label} {i}", r.load, values(r)))
    columns = list(zip(*(values(r) for r in runs), strict=True))
    lines.append(row("median", statistics.median(r.load for r in runs),
                     [statistics.median(c) for c in columns]))
    spread = [f"{min(c):.3f}-{max(c):.3f}" for c in columns]
    lines.append(f"| range | | {' | '.join(spread)} |")
    return "\n".join(lines)


def show_phases(run: Run) -> str:
    """The end-of-run steps of one run, from the session's end (first step) to the exit."""
    marks = [m for m in run.phases or [] if m[1] >= min(m[1] for m in run.phases or []
                                                       if m[0] == "finish")]
    first = min(m[1] for m in marks)
    steps: dict[str, list[float]] = {}
    for name, start, wall, cpu in sorted(marks, key=lambda m: m[1]):
        step = steps.setdefault(name, [start - first, 0.0, 0.0, 0])
        step[1] += wall
        step[2] += cpu
        step[3] += 1
    lines = ["| step | starts at s | calls | wall s | CPU s |", "|---|---:|---:|---:|---:|"]
    for name, (start, wall, cpu, calls) in steps.items():
        lines.append(f"| {name} | {start:.3f} | {calls} | {wall:.3f} | {cpu:.3f} |")
    return "\n".join(lines)


def rss_sweep(args: argparse.Namespace) -> None:
    """Peak RSS of the whole command, report included, as N grows: flat when nothing is
    kept per sample."""
    rows = ["| client | N | peak RSS MB | after last answer s |", "|---|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server, url = start_server(args.latency)
        try:
            for size in (args.n // 4, args.n // 2, args.n):
                data = make_small(work / f"data-{size}", size)
                envs = [("this", dict(ENV))]
                if args.before is not None:
                    envs.insert(0, ("before", ENV | {"PYTHONPATH": str(args.before.resolve())}))
                for name, env in envs:
                    out_dir, cache = work / f"run-{name}-{size}", work / f"cache-{name}-{size}"
                    cmd = [sys.executable, "-m", "visioneval",
                           *command(url, data, out_dir, cache, args.concurrency,
                                    not args.no_report)]
                    r = run_once(name, cmd, env, out_dir, size, args.concurrency,
                                 args.latency)
                    rows.append(f"| {name} | {size} | {r.rss:.0f} | {r.tail:.2f} |")
                    print(rows[-1], file=sys.stderr)
        finally:
            server.terminate()
            server.wait()
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--latency", type=float, default=LATENCY,
                        help="the server's answer time (0: a model that answers at once)")
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout's src/, run alternately with this one")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=SRC",
                        help="more checkouts' src/ to alternate with, each named")
    parser.add_argument("--phases", action="store_true",
                        help="one more run with its end-of-run steps timed")
    parser.add_argument("--rss-sweep", action="store_true",
                        help="peak RSS at N/4, N/2 and N samples instead (one run each)")
    args = parser.parse_args()
    if args.rss_sweep:
        rss_sweep(args)
        return
    here_env = dict(ENV)
    variants = [("this", here_env)]
    if args.before is not None:
        variants.insert(0, ("before", ENV | {"PYTHONPATH": str(args.before.resolve())}))
    for also in args.also:
        name, _, src = also.partition("=")
        variants.append((name, ENV | {"PYTHONPATH": str(Path(src).resolve())}))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = make_small(work / "data", args.n)
        server, url = start_server(args.latency)
        results: dict[str, list[Run]] = {name: [] for name, _ in variants}
        try:
            for i in range(args.runs):
                for name, env in variants:
                    out_dir, cache = work / f"run-{name}-{i}", work / f"cache-{name}-{i}"
                    cmd = [sys.executable, "-m", "visioneval",
                           *command(url, data, out_dir, cache, args.concurrency,
                                    not args.no_report)]
                    results[name].append(run_once(name, cmd, env, out_dir, args.n,
                                                  args.concurrency, args.latency))
                    print(f"{name} {i + 1}: {results[name][-1].wall:.2f} s", file=sys.stderr)
            phased: dict[str, Run] = {}
            for name, env in variants if args.phases else ():
                out_dir, cache = work / f"run-phases-{name}", work / f"cache-phases-{name}"
                cmd = [sys.executable, "-c", PHASES,
                       *command(url, data, out_dir, cache, args.concurrency,
                                not args.no_report)]
                phased[name] = run_once(name, cmd, env, out_dir, args.n, args.concurrency,
                                        args.latency)
        finally:
            server.terminate()
            server.wait()
    limit = args.n / args.concurrency * args.latency
    print(f"N = {args.n}, concurrency {args.concurrency}, latency {args.latency} s: limit "
          f"{limit:.3f} s; report {'off' if args.no_report else 'on'}\n")
    for name, runs in results.items():
        print(f"{name}:\n{summary(runs)}\n")
    for name, run in phased.items():
        print(f"{name}: steps after the last answer (one run; request phase {run.request:.3f} "
              f"s, after it {run.tail:.3f} s wall, {run.cpu_tail:.3f} s CPU):\n"
              f"{show_phases(run)}\n")


if __name__ == "__main__":
    main()
