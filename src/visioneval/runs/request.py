"""A run as one typed value: what is measured (benchmark, model, generation settings), how
the engine runs it, where the results go and where it runs (this process, one shard of it,
or every shard on Ray). The commands build these from flags, the Python API from its
arguments; `visioneval.runs.execute` and the commands' printing carry them out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval.backends.registry import BackendSpec, split_urls
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import GenerationSettings
from visioneval.distributed.options import DEFAULT_RAY_SHARDS
from visioneval.engine import defaults
from visioneval.engine.options import EngineFlags, EngineOptions
from visioneval.engine.stopping import StoppingFlags, StoppingRule
from visioneval.shards import Shard


@dataclass(frozen=True)
class OnRay:
    """Every shard of the run as a Ray task, then one merge (`--executor ray`)."""

    shards: int | None = None  # None: DEFAULT_RAY_SHARDS (a resume: the run's own count)
    ray_address: str | None = None  # None: a local Ray

    @property
    def shard_count(self) -> int:
        return self.shards or DEFAULT_RAY_SHARDS


@dataclass(frozen=True)
class RunRequest:
    """A new run. `definition`: the user's own benchmark definition as module:attribute
    (None for a registered one), recorded so resume and report can load it again;
    `shard`: the part of the samples this process runs; `ray`: run every shard on Ray."""

    benchmark: Benchmark
    spec: BackendSpec
    settings: GenerationSettings
    engine: EngineOptions = field(default_factory=EngineOptions)
    out: Path | None = None  # None: results/<benchmark>-<model>-<time>
    definition: str | None = None
    shard: Shard | None = None
    ray: OnRay | None = None
    probe_resolution: bool = False  # measure the endpoint's resolution first, into run.json
    batch: bool = False  # through the provider's batch API (`visioneval.runs.batching`)
    stopping: StoppingRule | None = None  # --target-ci: stop once the answer is known

    def __post_init__(self) -> None:
        if self.engine.concurrency > defaults.MAX_CONCURRENCY:
            raise ValueError(f"concurrency {self.engine.concurrency}: at most "
                             f"{defaults.MAX_CONCURRENCY} requests in flight per URL")
        if self.batch and self.stopping is not None:
            raise ValueError("--target-ci stops sending request by request once the answer "
                             "is known, and a batch is sent at once: use one or the other")
        if self.stopping is not None:
            from visioneval.variants.family import Varied

            if isinstance(self.benchmark, Varied):
                raise ValueError("--target-ci watches the main number of the samples as asked, "
                                 "not the --variant controls: send the variants in a run of "
                                 "their own")
        if self.batch and self.engine.max_cost is not None:
            from visioneval.runs.batching import MAX_COST_REFUSED

            raise ValueError(MAX_COST_REFUSED)
        if (self.batch or self.stopping is not None) and \
                (self.shard is not None or self.ray is not None):
            what = "--batch" if self.batch else "--target-ci"
            raise ValueError(f"{what} runs in one process over all the samples: run it "
                             "without --shard or --executor ray")


@dataclass(frozen=True)
class GivenOption:
    """A benchmark option given again with --resume: the flag as the user wrote it and its
    value (a list may still be a comma list)."""

    flag: str
    value: Any


@dataclass(frozen=True)
class Restated:
    """The flags of a new run given again with --resume (the same command with --resume
    for --out): each is taken when it says what the run recorded, after normalising (paths
    resolved, lists as lists, configs made from --splits/--tasks), and refused when it
    changes it (`visioneval.runs.restated`)."""

    backend: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    out: Path | None = None
    variants: tuple[str, ...] = ()
    probe_resolution: bool = False
    batch: bool = False
    shard: str | None = None
    options: Mapping[str, GivenOption] = field(default_factory=dict)  # by option name


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
    stopping: StoppingFlags = field(default_factory=StoppingFlags)  # --target-ci again
    restated: Restated = field(default_factory=Restated)  # a new run's flags given again

    @classmethod
    def from_flags(cls, flags: EngineFlags, base_url: str | Sequence[str] | None = None,
                   api_key_env: str | None = None, definition: str | None = None,
                   options: Mapping[str, Any] | None = None) -> ResumeGiven:
        return cls(flags, split_urls(base_url), api_key_env, definition, dict(options or {}))


@dataclass(frozen=True)
class ResumeRequest:
    """The continuation of the run in `directory` with what it recorded. `expected`: the
    benchmark the command is for (None: any); `given`: what the command line gave again;
    `ray`: resume its shards on Ray (a run made with --executor ray)."""

    directory: Path
    expected: str | None = None
    given: ResumeGiven = field(default_factory=ResumeGiven)
    ray: OnRay | None = None
