"""`--executor ray`: the shards of a run as Ray tasks, then one merge.

Each task is an ordinary shard run (`--shard K/N`) in `<out>/shards/K-of-N`, with its own
journal and response cache, so a task that dies is retried by Ray and resumes from its
journal, and Ctrl-C leaves shards that the same command (or `--resume <out> --executor
ray`) continues. The only thing the tasks share is the output folder: on a cluster it must
be on a filesystem every node sees.
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from visioneval import terminal
from visioneval.backends.registry import recorded
from visioneval.core import registry
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.store import RunLock, RunStore, WriteError
from visioneval.core.version import installed_version
from visioneval.engine.progress import RunProgress
from visioneval.engine.runner import RunStopped
from visioneval.io.parquet import DataError
from visioneval.runs.execute import Continuing, execute
from visioneval.runs.exit_codes import EXIT_INTERRUPTED, EXIT_STOPPED
from visioneval.runs.output import Output
from visioneval.runs.request import OnRay, ResumeRequest
from visioneval.runs.resume import check_resumable_kind, rebuild
from visioneval.runs.session import nothing_to_evaluate, planned, run_dir_for
from visioneval.runs.spec import RunSpec
from visioneval.runs.target import resume_command
from visioneval.shards import Shard
from visioneval.terminal import error_line, line, print_command

EXTRA_HINT = ("--executor ray needs the `ray` extra: uv sync --extra ray "
              "(or pip install 'visioneval[ray]')")
SHARDS_DIR = "shards"
TASK_RETRIES = 3  # a task whose worker dies (killed, node lost) runs again, resuming
PROBE_TIMEOUT_S = 180.0  # a cluster whose workers cannot start says so instead of hanging


def import_ray() -> Any:
    """Ray, or the one line saying which extra to install. Ray's own `uv run` integration is
    turned off (unless the user set it): it would make every worker `uv run` the project
    again in a copy of the current folder, instead of using this environment's Python."""
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    already = "ray" in sys.modules  # imported before us: the variable was read already
    try:
        import ray  # an extra: `ray`, imported after its environment variable is set
    except ImportError:
        raise ValueError(EXTRA_HINT) from None
    if already and os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] == "0":
        from ray._private import ray_constants  # an extra: `ray`

        ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
    return ray


@dataclass(frozen=True)
class ShardJob:
    """What a Ray task needs to run one shard: its `RunSpec` as JSON (the shard, its
    directory, the servers and key variables the driver's command line named: no secret but
    what the user put in a base URL, keys are read from each worker's environment) and the
    folder relative paths mean what they meant to the user in."""

    spec: str
    cwd: str

    @functools.cached_property
    def run_spec(self) -> RunSpec:
        return RunSpec.from_json(self.spec, "the shard's spec")

    @property
    def shard(self) -> Shard:
        shard = self.run_spec.shard
        assert shard is not None  # every job is one shard
        return shard

    @property
    def directory(self) -> str:
        return str(self.run_spec.out)


class MergeAndReport(Protocol):
    """How the command that started the shards merges them and says so (`commands.merge`)."""

    def __call__(self, directories: Sequence[Path], out: Path, *,
                 definition: str | None) -> int: ...


def run_shard(job: ShardJob) -> dict[str, Any]:
    """One shard, in a Ray worker: a new run, or the one already in its directory continued
    with its RunSpec's settings. Its tables go nowhere (the merge prints the run's); logs go to
    the worker's stderr. The exit code is a run's: 0 every sample scored, 1 some failed, 2
    it could not go on, 130 interrupted."""
    if os.path.isdir(job.cwd):
        os.chdir(job.cwd)  # relative paths in the options mean what they meant to the user
    err = terminal.console(stderr=True)
    terminal.setup_logging(err, False)
    output = Output(terminal.console(file=io.StringIO()), err, progress=False, report=False)
    spec = job.run_spec
    assert spec.out is not None and spec.shard is not None
    directory = spec.out
    continuing = Continuing(resumed=False) if (directory / "run.json").exists() else None
    lock = RunLock(directory)
    try:
        result = asyncio.run(execute(spec, directory, output, lock, continuing))
        code = (1 if result.n_errors else 0) if result.n_records else EXIT_STOPPED
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except (RunStopped, WriteError) as exc:
        terminal.error_line(err, str(exc))
        code = EXIT_STOPPED
    finally:
        lock.release()
    return {"shard": spec.shard.index, "code": code, "host": os.uname().nodename,
            "pid": os.getpid()}


def run(spec: RunSpec, output: Output, merge_and_report: MergeAndReport) -> int:
    """A new distributed run: N shard tasks in `<out>/shards`, merged into `<out>`."""
    benchmark = spec.build()
    ray = import_ray()
    if benchmark.total() == 0:
        raise DataError(nothing_to_evaluate(benchmark))
    out = run_dir_for(spec.out, benchmark.name, spec.backend.model, on_ray=True)
    count = spec.shard_count
    _check_existing(out, spec, count)
    return _run_jobs(ray, _jobs(spec, out, count), out, output, spec, benchmark.total(),
                     benchmark.name, merge_and_report)


def _jobs(spec: RunSpec, out: Path, count: int) -> list[ShardJob]:
    """Each shard's job: the run's spec, in this process, on shard K of N in its folder."""
    return [ShardJob(spec.given(shard=Shard(k, count), executor="local", shards=None,
                                ray_address=None,
                                out=out / SHARDS_DIR / Shard(k, count).dirname
                                ).to_json().decode(), os.getcwd())
            for k in range(1, count + 1)]


def resume(request: ResumeRequest, output: Output, merge_and_report: MergeAndReport) -> int:
    """Continue a distributed run from its shard folders (each continues its journal; a
    shard that never started starts), trusting of run.json what a plain resume trusts."""
    how, given, expected = request.ray or OnRay(), request.given, request.expected
    ray = import_ray()
    directory = request.directory.absolute()
    found = _shard_dirs(directory)
    if not found:
        raise ValueError(f"{directory} holds no shards ({SHARDS_DIR}/K-of-N with run.json): "
                         "it is not a run made with --executor ray")
    info = RunStore.open(found[0]).info
    shard = info.shard
    assert shard is not None  # _shard_dirs keeps shard runs only
    if how.shards is not None and how.shards != shard.count:
        raise ValueError(f"{directory} was run in {shard.count} shards; --shards "
                         f"{how.shards} cannot resume it")
    check_resumable_kind(info, directory, expected)
    spec = rebuild(info, given, directory)
    # What every shard goes on with: the run's settings with the flags given again.
    engine = given.flags.resumed(info.engine)[0].of_whole_run(shard)
    named = registry.portable(given.definition) if given.definition else spec.definition
    whole = spec.given(engine=engine, definition=named, executor="ray",
                       shards=shard.count, ray_address=how.ray_address, shard=None,
                       out=directory)
    line(output.err, f"resuming {directory}: {len(found)} of {shard.count} shards started "
                     "before")
    benchmark = spec.build()
    return _run_jobs(ray, _jobs(whole, directory, shard.count), directory, output, whole,
                     benchmark.total(), benchmark.name, merge_and_report)


def _shard_dirs(out: Path) -> list[Path]:
    folder = out / SHARDS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if (p / "run.json").is_file())


def _check_existing(out: Path, spec: RunSpec, count: int) -> None:
    """Shards already in `out` must be this run's (the same command run again resumes
    them); anything else is refused rather than mixed in."""
    plan = planned(spec.build())
    for directory in _shard_dirs(out):
        info = RunStore.open(directory).info
        shard = info.shard
        same = (shard is not None and shard.count == count
                and info.benchmark == plan.benchmark
                and info.options == plan.options
                and info.dataset.fingerprint == plan.dataset.fingerprint
                and (info.backend.kind, info.backend.model) ==
                (spec.backend.kind, spec.backend.model))
        if not same:
            raise ValueError(f"{directory} holds another run's shard (a different benchmark, "
                             "option, dataset, model or shard count); choose another --out")


def connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at `address`, or start a local Ray; True if this call started it."""
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(address="local", num_cpus=max(os.cpu_count() or 1, 1),
                 include_dashboard=False, log_to_driver=False)
    return True


def probe(ray: Any) -> None:
    """Check that a worker starts and has this visioneval: a missing install on a node, or
    another version, is one line instead of a hang or a half-merged run."""
    @ray.remote(num_cpus=0)
    def version() -> str:
        return installed_version()

    try:
        theirs = ray.get(version.remote(), timeout=PROBE_TIMEOUT_S)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"Ray workers could not run visioneval ({first}); install it on "
                         "every node") from None
    if theirs != installed_version():
        raise ValueError(f"Ray workers have visioneval {theirs}, this command "
                         f"{installed_version()}; "
                         "install the same version on every node")


def _run_jobs(ray: Any, jobs: list[ShardJob], out: Path, output: Output, how: RunSpec,
              total: int, label: str, merge_and_report: MergeAndReport) -> int:
    started = connect(ray, how.ray_address)
    try:
        probe(ray)
        task = ray.remote(max_retries=TASK_RETRIES, num_cpus=1)(run_shard)
        refs = {task.options(name=f"visioneval-shard-{job.shard.dirname}").remote(job): job
                for job in jobs}
        line(output.err, f"{len(jobs)} shards on Ray ({_where(ray, how)}) -> {out}/{SHARDS_DIR}")
        try:
            results, failures = _wait(ray, refs, output, total, label)
        except KeyboardInterrupt:
            for ref in refs:
                ray.cancel(ref, force=True)
            print_command(output.err, f"interrupted: every shard stopped; what they finished "
                                      f"is kept in {out}/{SHARDS_DIR}. Continue with the same "
                                      "command, or:", _resume_line(jobs, out, how, label),
                          style="yellow")
            return EXIT_INTERRUPTED
    finally:
        if started:
            ray.shutdown()
    for failure in failures:
        error_line(output.err, failure)
    if failures:
        print_command(output.err, "not merged: run the same command again, or this, to resume "
                                  "the shards that stopped:", _resume_line(jobs, out, how, label),
                      style="yellow")
        return 2
    stopped = [r for r in results if r["code"] not in (0, 1)]
    if stopped:
        shards = ", ".join(str(r["shard"]) for r in stopped)
        error_line(output.err, f"shard(s) {shards} stopped before the end (see the worker "
                               "logs); run the same command again to resume them")
        return 2
    # The definition the user named (their own benchmark's code), trusted for the merge.
    return merge_and_report([Path(j.directory) for j in jobs], out, definition=how.definition)


def _resume_line(jobs: list[ShardJob], out: Path, how: RunSpec, label: str) -> str:
    """The command that resumes the shards on Ray, as this process was started."""
    info = RunInfo(benchmark=label, definition=how.definition,
                   backend=BackendInfo.model_validate(recorded(how.backend)))
    again = resume_command(info, out)
    where = f" --ray-address {shlex.quote(how.ray_address)}" if how.ray_address else ""
    return f"{again} --executor ray{where}"


def _where(ray: Any, how: RunSpec) -> str:
    if how.ray_address:
        return f"cluster {how.ray_address}"
    cpus = int(ray.cluster_resources().get("CPU", 0))
    return f"a local Ray with {cpus} CPUs"


def _wait(ray: Any, refs: dict[Any, ShardJob], output: Output, total: int,
          label: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Wait for every task, with a progress bar fed by the shards' journals (lines written
    so far, read as they grow); a task that failed for good is one line."""
    journals = _JournalCounter([Path(j.directory) / "samples.jsonl" for j in refs.values()])
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    pending = list(refs)
    with RunProgress(total, f"{label} on ray", console=output.err,
                     enabled=output.progress) as progress:
        shown = 0
        while pending:
            done, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
            for ref in done:
                job = refs[ref]
                try:
                    results.append(ray.get(ref))
                except Exception as exc:  # RayTaskError wraps the shard's own error
                    failures.append(f"shard {job.shard.label} ({job.directory}) failed: "
                                    f"{_first_line(exc)}")
            now = min(journals.lines(), total)
            if now > shown:
                progress.set_completed(now)
                shown = now
    return results, failures


def _first_line(exc: BaseException) -> str:
    """The shard's own error, not Ray's traceback around it."""
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else type(cause).__name__


class _JournalCounter:
    """Lines in a set of growing files, counted from where the last count stopped."""

    def __init__(self, paths: list[Path]):
        self.paths = paths
        self.offsets = [0] * len(paths)
        self.counts = [0] * len(paths)

    def lines(self) -> int:
        for i, path in enumerate(self.paths):
            try:
                with open(path, "rb") as fh:
                    fh.seek(self.offsets[i])
                    chunk = fh.read()
            except FileNotFoundError:
                continue
            self.offsets[i] += len(chunk)
            self.counts[i] += chunk.count(b"\n")
        return sum(self.counts)
