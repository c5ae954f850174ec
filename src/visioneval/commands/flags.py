"""A command line's run: the flags every run command shares (`RunFlags`), what the command
itself knows (`RunTarget`: its benchmark, settings and the flags a resume refuses), and
`request_from`, the one place they become a `RunSpec` (a new run, or a file's run again)
or a `ResumeRequest`. Every run command goes through it; typer stays in
`visioneval.cli`."""

# Imports inside functions: `visioneval --help` loads this module (the generated commands'
# flags); a run's modules load when a run is asked for.

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from visioneval.core.backend_spec import BackendSpec, split_urls
from visioneval.core.records import GenerationSettings
from visioneval.shards import Shard
from visioneval.validation import first_error

if TYPE_CHECKING:
    from visioneval.core.benchmark import Benchmark
    from visioneval.engine.options import EngineFlags
    from visioneval.engine.stopping import StoppingFlags
    from visioneval.runs.output import Output
    from visioneval.runs.request import GivenOption, Restated, ResumeRequest
    from visioneval.runs.spec import Executor, RunSpec


@dataclass(frozen=True)
class RunFlags:
    """The model, engine, output and distribution flags as given (None: not given; a new
    run then takes the default, a resume what the run recorded)."""

    backend: str | None = None
    model: str | None = None
    base_url: list[str] | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    out: Path | None = None
    resume: Path | None = None
    concurrency: int | None = None
    max_attempts: int | None = None
    timeout: float | None = None
    backoff_base: float | None = None
    backoff_cap: float | None = None
    rpm: int | None = None
    tpm: int | None = None
    no_cache: bool = False
    cache_dir: Path | None = None
    refresh_cache: bool = False
    cache_key_url: bool = False
    max_reply_mb: float | None = None
    price_in: float | None = None
    price_out: float | None = None
    judge_price_in: float | None = None
    judge_price_out: float | None = None
    max_cost: float | None = None
    dry_run: bool = False
    no_progress: bool = False
    no_report: bool = False
    verbose: bool = False
    variant: list[str] | None = None
    epochs: int | None = None
    score: str | None = None
    probe_resolution: bool = False
    shard: str | None = None
    executor: str = "local"
    shards: int | None = None
    ray_address: str | None = None
    batch: bool = False
    target_ci: float | None = None
    min_samples: int | None = None

    def engine(self) -> EngineFlags:
        """The engine flags; a bad combination is a ValueError naming the flags."""
        from visioneval.engine.options import EngineFlags

        try:
            return EngineFlags(
                concurrency=self.concurrency, max_attempts=self.max_attempts,
                timeout_s=self.timeout, backoff_base_s=self.backoff_base,
                backoff_cap_s=self.backoff_cap, rpm=self.rpm, tpm=self.tpm,
                no_cache=self.no_cache, cache_dir=self.cache_dir,
                refresh_cache=self.refresh_cache, cache_key_url=self.cache_key_url,
                price_in=self.price_in, price_out=self.price_out,
                judge_price_in=self.judge_price_in, judge_price_out=self.judge_price_out,
                # A dry run sends nothing: it has no spending to limit.
                max_cost=None if self.dry_run else self.max_cost,
                max_reply_mb=self.max_reply_mb)
        except ValidationError as exc:
            from visioneval.engine.options import FLAGS

            error = exc.errors()[0]
            if error["type"] == "value_error" or not error["loc"]:
                raise ValueError(str(error["ctx"]["error"])) from None
            name = str(error["loc"][0])
            flag = FLAGS.get(name, "--" + name.replace("_", "-")).split("/")[0]
            raise ValueError(f"{flag}: {error['msg']}") from None

    def spread(self) -> tuple[Shard | None, Executor]:
        """--shard read and --executor checked (what they cannot go with: `RunSpec`)."""
        if self.executor not in ("local", "ray"):
            raise ValueError(f"--executor {self.executor!r}: local or ray")
        return (Shard.parse(self.shard) if self.shard is not None else None,
                "ray" if self.executor == "ray" else "local")


@dataclass(frozen=True)
class RunTarget:
    """What one command adds to the shared flags. `name`: its benchmark (None: `run`, any
    benchmark); `benchmark` and `settings` are built only for a new run; `definition`: the
    user's own definition named on the command line; `backend_required`: False when the
    benchmark may need no model (evaluate with validators only); `fixed`: the flags given
    that only a new run takes (a resume refuses them); `restated`: the benchmark options
    given that a resume compares with the run's record (taken when equal, by option
    name); `resume_options`: the benchmark options given again that a resume takes (a
    judge's server, --allow-scripts)."""

    name: str | None
    benchmark: Callable[[], Benchmark] | None = None  # None: a resume, built from its record
    settings: Callable[[], GenerationSettings] | None = None
    definition: str | None = None
    backend_required: bool = True
    fixed: Sequence[str] = ()
    restated: Mapping[str, GivenOption] = field(default_factory=dict)
    resume_options: Mapping[str, Any] = field(default_factory=dict)
    spec_file: Path | None = None  # `run --spec FILE`: the run that file describes, again


@dataclass(frozen=True)
class Ready:
    """A run command's flags and target, made once its flags are read (a bad one is a
    ValueError: one line), and what it says after a finished run (`then(code, output)`,
    which may raise the exit code)."""

    flags: RunFlags
    target: RunTarget
    then: Callable[[int, Output], int] | None = None


def request_from(flags: RunFlags, target: RunTarget) -> RunSpec | ResumeRequest:
    """The run the command line asks for: a new run's spec, or a resume; a bad combination
    of flags is a ValueError (one line, said by `RunSpec` where a spec cannot have it)."""
    from visioneval.runs.request import OnRay, ResumeGiven, ResumeRequest
    from visioneval.runs.spec import RunSpec, Stopping

    if target.spec_file is not None:
        return _from_file(flags, target, target.spec_file)
    shard, executor = flags.spread()
    engine = flags.engine()
    stopping = _stopping(flags)
    if flags.resume is not None:
        ray = OnRay(flags.shards, flags.ray_address) if executor == "ray" else None
        RunSpec.make(benchmark=_NOT_YET, backend=_NO_MODEL, engine=engine.new_run(),
                     executor=executor, shards=flags.shards, ray_address=flags.ray_address,
                     probe_resolution=flags.probe_resolution,
                     stopping=Stopping(target_ci=stopping.width) if stopping.width else None)
        fixed = target.fixed
        if fixed:
            raise ValueError(f"{', '.join(fixed)}: {'is' if len(fixed) == 1 else 'are'} "
                             f"recorded in {flags.resume}, and --resume continues with what "
                             "it recorded; drop the flag, or start a new run to change it")
        given = dataclasses.replace(ResumeGiven.from_flags(
            engine, flags.base_url, flags.api_key_env, target.definition,
            target.resume_options), restated=_restated(flags, target))
        if stopping.width is not None or stopping.min_samples is not None:
            given = dataclasses.replace(given, stopping=stopping)
        return ResumeRequest(flags.resume, target.name, given, ray)
    rule = stopping.rule()
    common = {"engine": engine.new_run(), "out": flags.out, "definition": target.definition,
              "shard": shard, "executor": executor, "shards": flags.shards,
              "ray_address": flags.ray_address, "probe_resolution": flags.probe_resolution,
              "batch": flags.batch, "variants": tuple(flags.variant or ()),
              "epochs": flags.epochs or 1, "score": flags.score or "sampled",
              "stopping": Stopping(target_ci=rule.width, min_samples=rule.min_samples)
              if rule is not None else None}
    # The combinations no run can have are refused before the benchmark reads its data.
    RunSpec.make(benchmark=_NOT_YET, backend=_NO_MODEL, **common)
    if target.benchmark is None or target.settings is None:
        raise ValueError("give the benchmark's options (or --resume RUN_DIR)")
    benchmark = target.benchmark()
    backend = _backend_spec(flags, target.backend_required, benchmark)
    spec = RunSpec.of(benchmark, backend=backend, generation=target.settings(), **common)
    spec.build()  # what only the built benchmark can refuse, before anything is made
    return spec


_NO_MODEL, _NOT_YET = BackendSpec(kind="openai", model="?"), "?"
"""Stand-ins: the flags are checked together before the benchmark and the model are known."""


# What a run read from a file takes from the command line: where it goes, its servers and
# key variable again, how requests are sent and what is printed. The rest is the file's.
_WITH_SPEC = {"out", "base_url", "api_key_env", "concurrency", "max_attempts", "timeout",
              "backoff_base", "backoff_cap", "rpm", "tpm", "no_cache", "cache_dir",
              "refresh_cache", "cache_key_url", "max_reply_mb", "price_in", "price_out",
              "judge_price_in", "judge_price_out", "max_cost", "dry_run", "no_progress",
              "no_report", "verbose"}


def _from_file(flags: RunFlags, target: RunTarget, path: Path) -> RunSpec:
    """`visioneval run --spec FILE`: the run the file describes (a RunSpec's JSON or a
    run's run.json) as a new run, with what this command line may give again."""
    from visioneval.runs.spec_file import read_spec

    default = RunFlags()
    refused = [f"--{f.name.replace('_', '-')}" for f in dataclasses.fields(RunFlags)
               if f.name not in _WITH_SPEC and getattr(flags, f.name) != getattr(default, f.name)]
    refused += [g.flag for g in target.restated.values()]
    if refused:
        raise ValueError(f"{', '.join(refused)}: the --spec file says what the run is; "
                         "change it there (or run without --spec)")
    spec = read_spec(path, base_urls=split_urls(flags.base_url),
                     api_key_env=flags.api_key_env, named=target.definition,
                     options=target.resume_options)
    engine, _ = flags.engine().resumed(spec.engine, spec.shard)
    return spec.given(engine=engine, out=flags.out or spec.out)


def _restated(flags: RunFlags, target: RunTarget) -> Restated:
    """A new run's flags given with --resume, to be compared with what the run recorded."""
    from visioneval.runs.request import Restated

    return Restated(backend=flags.backend, model=flags.model, temperature=flags.temperature,
                    max_tokens=flags.max_tokens, out=flags.out,
                    variants=tuple(flags.variant or ()), epochs=flags.epochs,
                    score=flags.score,
                    probe_resolution=flags.probe_resolution, batch=flags.batch,
                    shard=flags.shard, options=target.restated)


def _stopping(flags: RunFlags) -> StoppingFlags:
    """--target-ci and --min-samples as given (what they cannot go with: `RunSpec`)."""
    from visioneval.engine.stopping import StoppingFlags

    return StoppingFlags(flags.target_ci, flags.min_samples)


def _backend_spec(flags: RunFlags, backend_required: bool,
                  benchmark: Benchmark) -> BackendSpec:
    """The model from the flags; a command whose benchmark may need none (evaluate with
    validators only) gets the "none" backend. A run never picks a model for the user: one
    missing is one line naming the builtin baselines that fit and the offline demo."""
    if flags.backend is None or flags.model is None:
        if backend_required:
            raise ValueError(model_needed(benchmark))
        return BackendSpec(kind="none", model="none")
    return BackendSpec(kind=flags.backend, model=flags.model, base_url=flags.base_url,
                       api_key_env=flags.api_key_env)


def model_needed(benchmark: Benchmark) -> str:
    """The line said when a run names no model: what to add, offline choices included."""
    from visioneval.invocation import command

    fits = benchmark.builtin_models
    offline = (f"the builtin baselines that fit {benchmark.name}: --backend builtin --model "
               f"{fits[0]}" + (f" (or {', '.join(fits[1:])})" if fits[1:] else "") + "; or "
               if fits else "")
    return (f"--backend and --model are required (the model to evaluate); offline, "
            f"{offline}try `{command('demo')}`")
def generation(temperature: float | None, max_tokens: int | None,
               default_max_tokens: int) -> GenerationSettings:
    """The generation settings from the flags (None: not given, the default applies); a
    value a run cannot record (a temperature of nan, a count beyond 64 bits) is one line
    naming its flag."""
    try:
        return GenerationSettings(temperature=0.0 if temperature is None else temperature,
                                  max_tokens=default_max_tokens if max_tokens is None
                                  else max_tokens)
    except ValidationError as exc:
        raise ValueError(first_error(exc, place="flag", count_more=False)) from None
