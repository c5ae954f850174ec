"""What a resume continues with, read from run.json: the benchmark rebuilt by the trust rule,
the model (its server and key only as the command line names them again, see
`visioneval.runs.target`), the generation settings, the shard and the engine settings with
the flags given again.

Flags that would change what is measured (the model, a benchmark option, the generation
settings) are taken when they say what the run recorded and refused when they change it
(`visioneval.runs.restated`), never silently dropped: a change is a new run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.backends.registry import BackendSpec
from visioneval.backends.registry import recorded as recorded_backend
from visioneval.core import registry
from visioneval.core.backend_spec import split_urls
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.engine.options import Change
from visioneval.epochs.family import rebuilt
from visioneval.invocation import command
from visioneval.runs.request import ResumeGiven
from visioneval.runs.restated import check_restated
from visioneval.runs.spec import RunSpec
from visioneval.runs.target import (
    judge_flags_of,
    resume_command,
    resumed_spec,
    target_flags,
)


@dataclass(frozen=True)
class Continuation:
    """A resume ready to start: the run's spec as recorded, with what the command line gave
    again (its servers, key variables, engine flags: `changes` are the recorded engine
    settings they replaced), its benchmark built."""

    spec: RunSpec
    changes: tuple[Change, ...]


def continuation(info: RunInfo, given: ResumeGiven, directory: Path) -> Continuation:
    """`RunSpec.from_run(info)` with the command line's flags given again."""
    spec = rebuild(info, given, directory)
    engine, changes = given.flags.resumed(info.engine, spec.shard)
    named = registry.portable(given.definition) if given.definition else None
    return Continuation(spec.given(engine=engine, definition=named or spec.definition),
                        tuple(changes))


def check_resumable_kind(info: RunInfo, directory: Path, expected: str | None) -> None:
    """A run of another tool's answers, or of another benchmark than the command's, is not
    resumed here (one line saying what to do instead)."""
    if info.backend.kind == "rescored":
        raise ValueError(f"{directory} holds answers re-scored from another tool's log (no "
                         "model was asked), so there is nothing to resume")
    if expected is not None and info.benchmark != expected:
        raise ValueError(f"{directory} is a {info.benchmark} run; resume it with "
                         f"`{resume_command(info, directory)}`")


def rebuild(info: RunInfo, given: ResumeGiven, directory: Path | None = None) -> RunSpec:
    """The RunSpec a resume continues with, its benchmark built: the run's record, its servers
    and key variables as the command line names them again; ValueError (one line) when
    run.json names code the command line did not, or a server the command line must name."""
    definition = definition_for_resume(info, given.definition, directory)
    options = resumed_options(definition, info.options, given.options)
    benchmark = rebuilt(definition.build(options), info, definition)
    check_restated(info, definition, benchmark, given.restated, directory)
    flags = target_flags(info.benchmark)
    backend = resumed_spec(info.backend, given.base_urls, given.api_key_env, flags)
    check_judge_target(definition, benchmark, info.options, given.options)
    spec = RunSpec.from_run(info).given(options=options, backend=backend)
    return spec.with_benchmark(benchmark)


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
    return definition.resumed_options(options, given)


def check_judge_target(definition: BenchmarkDefinition, benchmark: Benchmark,
                       recorded: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """A judge's server and key follow the model's rule: named again on the command line
    unless it is a hosted API with its own key."""
    if definition.judge_target is None or benchmark.judge is None:
        return
    url_option, key_option = definition.judge_target
    flags = judge_flags_of(definition.judge_target)
    judge = benchmark.judge  # kind and model as recorded; the URL and key as recorded, below
    stored = BackendInfo.model_validate(recorded_backend(BackendSpec(
        kind=judge.kind, model=judge.model, base_url=recorded.get(url_option),
        api_key_env=recorded.get(key_option))))
    resumed_spec(stored, split_urls(given.get(url_option)), given.get(key_option), flags)
