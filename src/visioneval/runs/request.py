"""A resume as the command line asks for it: the run directory, what the command line gave
again (`ResumeGiven`: servers, keys, engine flags, a new run's flags restated), and where it
goes on (this process, or its shards on Ray). A new run is a `visioneval.runs.spec.RunSpec`;
a resume becomes one from the run's record (`visioneval.runs.resume.continuation`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from visioneval.core.backend_spec import split_urls
from visioneval.engine.options import EngineFlags
from visioneval.engine.stopping import StoppingFlags
from visioneval.shards import DEFAULT_RAY_SHARDS


@dataclass(frozen=True)
class OnRay:
    """Every shard of the run as a Ray task, then one merge (`--executor ray`)."""

    shards: int | None = None  # None: DEFAULT_RAY_SHARDS (a resume: the run's own count)
    ray_address: str | None = None  # None: a local Ray

    @property
    def shard_count(self) -> int:
        return self.shards or DEFAULT_RAY_SHARDS


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
    epochs: int | None = None
    score: str | None = None
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
