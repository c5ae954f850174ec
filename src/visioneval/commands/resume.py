"""`--resume RUN_DIR`: continue a run with what it recorded, taking from the command line
only what a file may not decide (see `resume_target`) and what the user changes on purpose.

What run.json recorded: the benchmark and its options, the model, the generation settings
and every engine setting (concurrency, retries, timeouts, rate limits, the cache). Engine
flags given again replace their recorded value, each said in one line and recorded in the
session. Flags that would change what is measured (the model, a benchmark option, the
generation settings) are refused, never silently dropped: that is a new run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval.backends.registry import BackendSpec, split_urls
from visioneval.commands.resume_target import (
    judge_flags_of,
    resume_command,
    resumed_spec,
    target_flags,
)
from visioneval.commands.run import Output, _execute, session
from visioneval.core import registry
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.records import GenerationSettings
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.store import RunLock, RunStore
from visioneval.engine.options import EngineFlags
from visioneval.invocation import command
from visioneval.shards import Shard


@dataclass(frozen=True)
class ResumeGiven:
    """What a resume's command line gave: engine flags, the model's server and key variable,
    the user's own benchmark definition, and the benchmark options a resume takes from the
    command line (a judge's server and key, trust such as --allow-scripts)."""

    flags: EngineFlags = field(default_factory=EngineFlags)
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    definition: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_flags(cls, flags: EngineFlags, base_url: str | Sequence[str] | None = None,
                   api_key_env: str | None = None, definition: str | None = None,
                   options: Mapping[str, Any] | None = None) -> ResumeGiven:
        return cls(flags, split_urls(base_url), api_key_env, definition, dict(options or {}))


@dataclass(frozen=True)
class Resumed:
    """A run as a resume will continue it: the benchmark rebuilt, the model and settings."""

    benchmark: Benchmark
    spec: BackendSpec
    settings: GenerationSettings
    shard: Shard | None


def resume(directory: Path, expected: str | None, given: ResumeGiven, output: Output) -> int:
    """Continue a run (`expected`: the benchmark the command is for; None: any)."""
    info = RunStore.open(directory).info
    check_resumable_kind(info, directory, expected)
    with RunLock(directory) as lock:  # before anything is read for the session
        info = RunStore.open(directory).info
        run = rebuild(info, given, directory)
        engine, changes = given.flags.resumed(info.engine, run.shard)
        output.err.print(f"resuming {directory}: {run.spec.kind} {run.spec.model}"
                         + (f", shard {run.shard.label}" if run.shard else ""),
                         highlight=False, soft_wrap=True)
        for change in changes:
            output.err.print(f"  {change.line()}", highlight=False, soft_wrap=True,
                             markup=False)
        named = registry.portable(given.definition) if given.definition else None
        return _execute(session(run.benchmark, run.spec, run.settings, engine, directory,
                                True, output, lock, named, changes=changes),
                        run.benchmark, directory, output)


def check_resumable_kind(info: RunInfo, directory: Path, expected: str | None) -> None:
    """A run of another tool's answers, or of another benchmark than the command's, is not
    resumed here (one line saying what to do instead)."""
    if info.backend.kind == "rescored":
        raise ValueError(f"{directory} holds answers re-scored from another tool's log (no "
                         "model was asked), so there is nothing to resume")
    if expected is not None and info.benchmark != expected:
        raise ValueError(f"{directory} is a {info.benchmark} run; resume it with "
                         f"`{resume_command(info, directory)}`")


def rebuild(info: RunInfo, given: ResumeGiven, directory: Path | None = None) -> Resumed:
    """The benchmark, model and settings a resume continues with; ValueError (one line) when
    run.json names code the command line did not, or a server the command line must name."""
    definition = definition_for_resume(info, given.definition, directory)
    options = resumed_options(definition, info.options, given.options)
    benchmark = definition.build(options)
    flags = target_flags(info.benchmark)
    spec = resumed_spec(info.backend, given.base_urls, given.api_key_env, flags)
    check_judge_target(definition, benchmark, info.options, given.options)
    settings: GenerationSettings = info.generation.settings()
    return Resumed(benchmark, spec, settings, info.shard)


def definition_for_resume(info: RunInfo, named: str | None,
                          directory: Path | None = None) -> BenchmarkDefinition:
    """The run's benchmark definition by the trust rule of any reading (`registry.for_run`):
    a registered one by name; a user's own only when this command line names it again (a
    run directory alone never makes visioneval import code)."""
    try:
        return registry.for_run(info, named, directory, instead="it cannot be resumed")
    except registry.UntrustedRun:
        shown = info.definition or info.benchmark
        again = command("run", shown, "--resume", directory) if directory is not None \
            else command("run", shown, "--resume") + " RUN_DIR"
        raise ValueError(f"this run's benchmark is code of your own ({shown}); a run "
                         "directory alone never makes visioneval import code, so name it "
                         f"again: {again}") from None


def resumed_options(definition: BenchmarkDefinition, recorded: Mapping[str, Any],
                    given: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded options, with what the command line gave for the judge's server and
    key; the options that grant trust are off unless given again."""
    options = dict(recorded)
    for name in definition.trust_options:
        if name in options:
            options[name] = bool(given.get(name, False))
    for name in definition.judge_target or ():
        if given.get(name) is not None:
            options[name] = given[name]
    return options


def check_judge_target(definition: BenchmarkDefinition, benchmark: Benchmark,
                       recorded: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """A judge's server and key follow the model's rule: named again on the command line
    unless it is a hosted API with its own key."""
    if definition.judge_target is None or benchmark.judge is None:
        return
    url_option, key_option = definition.judge_target
    flags = judge_flags_of(definition.judge_target)
    judge = benchmark.judge  # kind and model as recorded; the URL and key as recorded, below
    stored = BackendInfo.model_validate(BackendSpec(
        kind=judge.kind, model=judge.model, base_url=recorded.get(url_option),
        api_key_env=recorded.get(key_option)).recorded())
    resumed_spec(stored, split_urls(given.get(url_option)), given.get(key_option), flags)
