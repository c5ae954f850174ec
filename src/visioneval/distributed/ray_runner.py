"""`--executor ray`: the shards of a run as Ray tasks, then one merge.

Each task is an ordinary shard run (`--shard K/N`) in `<out>/shards/K-of-N`, with its own
journal and response cache, so a task that dies is retried by Ray and resumes from its
journal, and Ctrl-C leaves shards that the same command (or `--resume <out> --executor
ray`) continues. The only thing the tasks share is the output folder: on a cluster it must
be on a filesystem every node sees.
"""

from __future__ import annotations

import io
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval import terminal
from visioneval.backends.registry import BackendSpec
from visioneval.commands.run import EXIT_INTERRUPTED
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import GenerationSettings
from visioneval.engine.options import EngineFlags, EngineOptions
from visioneval.io.parquet import DataError
from visioneval.runs.output import Output
from visioneval.runs.request import OnRay, ResumeGiven, ResumeRequest, RunRequest
from visioneval.session import default_run_dir, nothing_to_evaluate
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
        import ray
    except ImportError:
        raise ValueError(EXTRA_HINT) from None
    if already and os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] == "0":
        from ray._private import ray_constants

        ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
    return ray


@dataclass(frozen=True)
class ShardJob:
    """Everything a Ray task needs to run (or resume) one shard; no secret but what the
    user put in a base URL (keys are read from each worker's environment). The server,
    key variable and definition come from the driver's command line, so a shard's resume
    trusts them as its own command line's."""

    benchmark: str  # registered name, or a user's definition as module:attribute
    options: dict[str, Any]
    spec: BackendSpec
    settings: GenerationSettings
    engine: EngineOptions  # a new shard's settings
    shard: Shard
    directory: str
    cwd: str
    flags: EngineFlags = field(default_factory=EngineFlags)  # a resumed shard's flags
    resume_options: dict[str, Any] = field(default_factory=dict)
    variants: tuple[str, ...] = ()  # --variant, as the driver's command line gave them

    def resume_given(self) -> ResumeGiven:
        from visioneval.core import registry

        user = self.benchmark if self.benchmark not in registry.names() else None
        return ResumeGiven(self.flags, self.spec.base_urls, self.spec.api_key_env, user,
                           self.resume_options)


def run_shard(job: ShardJob) -> dict[str, Any]:
    """One shard, in a Ray worker: a new run, or the resume of the one in its directory.
    The tables go nowhere (the merge prints the run's); logs go to the worker's stderr."""
    from visioneval.commands.common import setup_logging
    from visioneval.commands.resume import resume as resume_run
    from visioneval.commands.run import run as run_here
    from visioneval.core import registry

    if os.path.isdir(job.cwd):
        os.chdir(job.cwd)  # relative paths in the options mean what they meant to the user
    err = terminal.console(stderr=True)
    setup_logging(err, False)
    output = Output(terminal.console(file=io.StringIO()), err, progress=False, report=False)
    directory = Path(job.directory)
    if (directory / "run.json").exists():
        code = resume_run(ResumeRequest(directory, None, job.resume_given()), output)
    else:
        benchmark = registry.build(job.benchmark, job.options)
        if job.variants:
            from visioneval.variants.family import with_variants

            benchmark = with_variants(benchmark, job.variants, registry.definition(job.benchmark))
        definition = job.benchmark if job.benchmark not in registry.names() else None
        code = run_here(RunRequest(benchmark, job.spec, job.settings, job.engine, directory,
                                   definition, job.shard), output)
    return {"shard": job.shard.index, "code": code, "host": os.uname().nodename,
            "pid": os.getpid()}


def run(request: RunRequest, output: Output) -> int:
    """A new distributed run: N shard tasks in `<out>/shards`, merged into `<out>`."""
    how = request.ray or OnRay()
    benchmark, spec, definition = request.benchmark, request.spec, request.definition
    ray = import_ray()
    if benchmark.total() == 0:
        raise DataError(nothing_to_evaluate(benchmark))
    out = (request.out or default_run_dir(benchmark.name, spec.model)).absolute()
    count = how.shard_count
    _check_existing(out, benchmark, spec, count)
    name = definition or benchmark.name
    jobs = [ShardJob(name, benchmark.options.model_dump(), spec, request.settings,
                     request.engine,
                     Shard(k, count), str(out / SHARDS_DIR / Shard(k, count).dirname),
                     os.getcwd(), variants=_variant_names(benchmark))
            for k in range(1, count + 1)]
    return _run_jobs(ray, jobs, out, output, how, benchmark.total(), benchmark.name)


def resume(request: ResumeRequest, output: Output) -> int:
    """Continue a distributed run from its shard folders (each resumes its journal; a shard
    that never started starts), trusting of run.json what a plain resume trusts."""
    from visioneval.core.store import RunStore
    from visioneval.runs.resume import check_resumable_kind, rebuild

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
    run = rebuild(info, given, directory)
    name = given.definition or info.benchmark
    # What a shard that never started starts with: the run's settings, its own cache file.
    engine = given.flags.resumed(info.engine)[0].of_whole_run(shard)
    jobs = [ShardJob(name, info.options, run.spec, run.settings, engine,
                     Shard(k, shard.count),
                     str(directory / SHARDS_DIR / Shard(k, shard.count).dirname), os.getcwd(),
                     given.flags, dict(given.options))
            for k in range(1, shard.count + 1)]
    line(output.err, f"resuming {directory}: {len(found)} of {shard.count} shards started "
                     "before")
    return _run_jobs(ray, jobs, directory, output, how, run.benchmark.total(),
                     run.benchmark.name)


def _shard_dirs(out: Path) -> list[Path]:
    folder = out / SHARDS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if (p / "run.json").is_file())


def _check_existing(out: Path, benchmark: Benchmark, spec: BackendSpec, count: int) -> None:
    """Shards already in `out` must be this run's (the same command run again resumes
    them); anything else is refused rather than mixed in."""
    from visioneval.core.store import RunStore
    from visioneval.session import planned

    plan = planned(benchmark)
    for directory in _shard_dirs(out):
        info = RunStore.open(directory).info
        shard = info.shard
        same = (shard is not None and shard.count == count
                and info.benchmark == plan.benchmark
                and info.options == plan.options
                and info.dataset.fingerprint == plan.dataset.fingerprint
                and (info.backend.kind, info.backend.model) == (spec.kind, spec.model))
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
    from visioneval.core.version import installed_version

    @ray.remote(num_cpus=0)
    def version() -> str:
        from visioneval.core.version import installed_version

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


def _run_jobs(ray: Any, jobs: list[ShardJob], out: Path, output: Output, how: OnRay,
              total: int, label: str) -> int:
    from visioneval.distributed.report import merge_and_report

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
    from visioneval.core import registry

    # The definition the user named (their own benchmark's code), trusted for the merge.
    named = jobs[0].benchmark if jobs and jobs[0].benchmark not in registry.names() else None
    return merge_and_report([Path(j.directory) for j in jobs], out, False, output,
                            replace=True, definition=named)


def _resume_line(jobs: list[ShardJob], out: Path, how: OnRay, label: str) -> str:
    """The command that resumes the shards on Ray, as this process was started."""
    from visioneval.core import registry
    from visioneval.core.runfiles import BackendInfo, RunInfo
    from visioneval.runs.target import resume_command

    job = jobs[0]
    own = job.benchmark if job.benchmark not in registry.names() else None
    info = RunInfo(benchmark=label, definition=own,
                   backend=BackendInfo.model_validate(job.spec.recorded()))
    again = resume_command(info, out)
    where = f" --ray-address {shlex.quote(how.ray_address)}" if how.ray_address else ""
    return f"{again} --executor ray{where}"


def _where(ray: Any, how: OnRay) -> str:
    if how.ray_address:
        return f"cluster {how.ray_address}"
    cpus = int(ray.cluster_resources().get("CPU", 0))
    return f"a local Ray with {cpus} CPUs"


def _wait(ray: Any, refs: dict[Any, ShardJob], output: Output, total: int,
          label: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Wait for every task, with a progress bar fed by the shards' journals (lines written
    so far, read as they grow); a task that failed for good is one line."""
    from visioneval.engine.progress import RunProgress

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


def _variant_names(benchmark: Benchmark) -> tuple[str, ...]:
    """The --variant names of a benchmark with variants (each shard makes them again)."""
    from visioneval.variants.family import Varied

    return tuple(v.name for v in benchmark.variants) if isinstance(benchmark, Varied) else ()
