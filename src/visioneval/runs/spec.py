"""A run as one value that can be written down: `RunSpec`.

Everything a run is: the benchmark (its name, or your own definition as module:attribute)
and its options, the request variants, the model (API, name, servers, the variable its key
is read from, never the key), the generation settings, the engine settings, the stopping
rule, batch and probe, where the results go, and where it runs (this process, one shard,
or every shard on Ray). The command line, a suite file's rows, `visioneval.run(...)` and
the Ray workers all build one; `runs.execute.execute` carries it out; run.json records
what it says (`RunSpec.from_run` reads it back), so a finished run can be run again
(`visioneval run --spec run.json --out NEW`).

Flags that cannot go together are refused here, once, in the user's words: a
`SpecError` of one line naming the flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from visioneval.core import defaults, registry
from visioneval.core.backend_spec import LOCAL_KINDS, BackendSpec
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.engine_options import EngineOptions
from visioneval.core.records import GenerationSettings
from visioneval.core.runfiles import RunInfo
from visioneval.engine.stopping import DEFAULT_MIN_SAMPLES, StoppingRule
from visioneval.engine.stopping import refusal as stopping_refusal
from visioneval.epochs.expected import TOP as EXPECTED_TOP
from visioneval.epochs.family import MAX_EPOCHS, with_epochs
from visioneval.runs.batching import MAX_COST_REFUSED
from visioneval.runs.batching import refusal as batch_refusal
from visioneval.shards import DEFAULT_RAY_SHARDS, MAX_RAY_SHARDS, Shard
from visioneval.validation import error_message, first_error
from visioneval.variants.family import with_variants

Executor = Literal["local", "ray"]


class SpecError(ValueError):
    """A run specification that cannot be run: one line naming the flags or the field."""


class Stopping(BaseModel):
    """`--target-ci`: stop once the headline's 95% interval is at most `target_ci`
    percentage points wide, after at least `min_samples` outcomes. The samples' random
    order is seeded by the benchmark's own seed."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    target_ci: float
    min_samples: int = DEFAULT_MIN_SAMPLES

    @model_validator(mode="after")
    def _bounds(self) -> Stopping:
        self.rule(0)  # its bounds, said as the flags' (`StoppingRule`)
        return self

    def rule(self, seed: int) -> StoppingRule:
        return StoppingRule(self.target_ci, self.min_samples, seed)


class RunSpec(BaseModel):
    """One run, complete. Lossless as JSON (`to_json`, `from_json`); `build()` is the one
    place that turns it into a benchmark."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    benchmark: str = Field(description="A registered benchmark's name, or the name of your "
                           "own (its code: `definition`).")
    definition: str | None = Field(
        None, description="module:attribute of your own benchmark definition.")
    options: dict[str, Any] = Field(
        {}, description="The benchmark's options, as its options model takes them.")
    variants: tuple[str, ...] = Field(
        (), description="Request variants sent beside every sample, as --variant names them.")
    epochs: int = Field(1, ge=1, le=MAX_EPOCHS, description="Answers asked per sample "
                        "(--epochs): each later answer a request of its own with its own seed.")
    score: Literal["sampled", "expected"] = Field(
        "sampled", description="expected (--score expected): each answer's expected outcome "
        "from its first token's log-probabilities too.")
    backend: BackendSpec = Field(description="The model asked: API, name, servers, and the "
                                 "variable its key is read from (never the key).")
    generation: GenerationSettings | None = Field(
        None, description="Sampling settings; None: temperature 0 and the benchmark's own "
        "max_tokens.")
    engine: EngineOptions = Field(EngineOptions(), description="How requests are sent.")
    stopping: Stopping | None = None
    batch: bool = Field(False, description="Through the provider's batch API (--batch).")
    probe_resolution: bool = Field(
        False, description="Measure the endpoint's effective resolution first.")
    out: Path | None = Field(None, description="The run directory; None: "
                             "results/<benchmark>-<model>-<time>.")
    shard: Shard | None = Field(None, description="The part of the samples this run holds.")
    executor: Executor = Field("local", description="local: this process; ray: every shard "
                               "as a Ray task, then one merge.")
    shards: int | None = Field(None, description=f"Shards on Ray (None: {DEFAULT_RAY_SHARDS}).")
    ray_address: str | None = Field(None, description="The Ray cluster (None: a local Ray).")

    _base: Benchmark | None = PrivateAttr(None)  # built before, without its variants
    _built: Benchmark | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _a_person(cls, data: Any) -> Any:
        """A person (`--backend human`) answers one trial at a time, never from the cache,
        with no timeout but the page's own and no retries: the engine options say so."""
        if not isinstance(data, dict):
            return data
        backend = data.get("backend")
        kind = backend.kind if isinstance(backend, BackendSpec) else \
            backend.get("kind") if isinstance(backend, dict) else None
        if kind != "human":
            return data
        engine = data.get("engine") or EngineOptions()
        if not isinstance(engine, EngineOptions):
            engine = EngineOptions.model_validate(engine)
        return data | {"engine": engine.model_copy(update=PERSON_ENGINE)}

    @model_validator(mode="after")
    def _coherent(self) -> RunSpec:
        """The combinations no run can have, each said once (the first found)."""
        if found := _refusals(self):
            raise ValueError(found[0])
        return self

    def __eq__(self, other: object) -> bool:
        """Equal when they say the same run; whether either has built its benchmark yet
        does not count."""
        return isinstance(other, RunSpec) and self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash(self.to_json())

    # -- making one ------------------------------------------------------------------

    @classmethod
    def make(cls, **fields: Any) -> RunSpec:
        """A spec from Python values; a SpecError of one line when it cannot be run."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise SpecError(_one_line(exc)) from None

    @classmethod
    def of(cls, benchmark: Benchmark, **fields: Any) -> RunSpec:
        """A RunSpec of a benchmark already built (your own Benchmark object, or one a
        command built from its flags): `build()` gives it back as it is."""
        options = benchmark.options.model_dump(mode="json") \
            if isinstance(benchmark.options, BaseModel) else dict(benchmark.options or {})
        spec = cls.make(benchmark=benchmark.name, options=options, **fields)
        spec._base = benchmark
        return spec

    @classmethod
    def from_json(cls, raw: bytes | str, source: str = "the run specification") -> RunSpec:
        """A spec written by `to_json`; a SpecError naming `source` and the field."""
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"{source}: not valid JSON ({exc})") from None
        return cls.from_data(data, source)

    @classmethod
    def from_data(cls, data: Any, source: str = "the run specification") -> RunSpec:
        """A spec from JSON already read; a SpecError naming `source` and the field."""
        if not isinstance(data, dict):
            raise SpecError(f"{source}: not a run specification (a JSON object)")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SpecError(f"{source}: {_one_line(exc)}") from None

    @classmethod
    def from_run(cls, info: RunInfo) -> RunSpec:
        """The RunSpec a run recorded in its run.json: what it measured, on what model, with
        what settings (servers as the file names them, without credentials; the command
        line names them again before anything is sent, `visioneval.runs.target`)."""
        backend = info.backend
        return cls.make(
            benchmark=info.benchmark, definition=info.definition, options=dict(info.options),
            variants=tuple(v.name for v in info.variants or ()), epochs=info.epochs or 1,
            score=info.score or "sampled",
            backend=BackendSpec(kind=backend.kind, model=backend.model,
                                base_urls=tuple(backend.base_urls),
                                api_key_env=backend.api_key_env),
            generation=info.generation.settings(),
            engine=info.engine or EngineOptions(),
            stopping=Stopping(target_ci=info.stopping.target_ci,
                              min_samples=info.stopping.min_samples)
            if info.stopping is not None else None,
            batch=info.batch is not None, probe_resolution=info.resolution_probe is not None,
            shard=info.shard)

    def given(self, **changes: Any) -> RunSpec:
        """This spec with `changes` (field=value), checked again; the benchmark is built
        anew unless only where and how it runs changed."""
        spec = self.make(**(dict(self) | changes))
        if not changes.keys() & _WHAT_IS_MEASURED:
            spec._base, spec._built = self._base, self._built
        return spec

    def with_benchmark(self, benchmark: Benchmark) -> RunSpec:
        """This spec, its benchmark already built as it says (a resume rebuilds it from the
        record with the run's own variants)."""
        spec = self.given()
        spec._built = benchmark
        return spec

    def to_json(self) -> bytes:
        """Indented JSON that `from_json` reads back to an equal spec."""
        return orjson.dumps(self.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"

    # -- what it names ---------------------------------------------------------------

    def definition_object(self) -> BenchmarkDefinition:
        """The benchmark's definition: registered, or the code `definition` names (loaded
        only when this spec came from the caller, never from a run directory alone); the
        base's defaults for a Benchmark object of no definition."""
        name = self.definition or self.benchmark
        if self.definition is None and name not in registry.names() and self._base is not None:
            return BenchmarkDefinition()
        return registry.definition(name)

    def build(self, definition: BenchmarkDefinition | None = None) -> Benchmark:
        """The benchmark this spec runs, with its request variants; a ValueError of one line
        naming the option when one is not valid. Built once per spec."""
        if self._built is not None:
            return self._built
        chosen = definition or self.definition_object()
        model = chosen.command_options
        if self._base is not None:
            benchmark = self._base
        elif model is None:
            benchmark = chosen.build(dict(self.options))
        else:
            if found := chosen.unknown_option(self.options):
                raise SpecError(f"options {found[0]}: {found[1]}")
            try:
                options = model.model_validate(self.options)
            except ValidationError as exc:
                raise SpecError(_one_line(exc)) from None
            benchmark = chosen.from_command(options)
        if self.variants:
            benchmark = with_variants(benchmark, self.variants, chosen)
        if self.epochs > 1 or self.score == "expected":
            try:
                benchmark = with_epochs(benchmark, self.epochs, chosen,
                                        expected=self.score == "expected")
            except ValueError as exc:
                raise SpecError(str(exc)) from None
        self._check(benchmark)
        self._built = benchmark
        return benchmark

    def settings(self) -> GenerationSettings:
        """The generation settings: as given, else temperature 0 and the benchmark's own
        max_tokens."""
        settings = self.generation if self.generation is not None else \
            GenerationSettings(max_tokens=self.definition_object().max_tokens)
        if self.score == "expected" and settings.top_logprobs is None:
            return settings.model_copy(update={"top_logprobs": EXPECTED_TOP})
        return settings

    def seed(self) -> int:
        """The seed value of the samples' random order under --target-ci: the benchmark's own."""
        return int(getattr(self.build().options, "seed", 0) or 0)

    @property
    def on_ray(self) -> bool:
        return self.executor == "ray"

    @property
    def shard_count(self) -> int:
        return self.shards or DEFAULT_RAY_SHARDS

    def _check(self, benchmark: Benchmark) -> None:
        """What only the built benchmark can say: whether --target-ci can stop on its main
        number, and whether --batch can send its requests."""
        if self.stopping is not None and (why := stopping_refusal(benchmark)):
            raise SpecError(why)
        if self.batch and (why := batch_refusal(benchmark, self.backend)):
            raise SpecError(why)


_WHAT_IS_MEASURED = {"benchmark", "definition", "options", "variants", "epochs", "score"}


PERSON_ENGINE: dict[str, Any] = {"concurrency": 1, "cache_path": None, "refresh_cache": False,
                                 "timeout_s": 7 * 86_400.0, "max_attempts": 1}
"""A person's run: one trial at a time, never a cached answer, a week per trial (a person
may leave the page open over a break), no second attempt."""


def _refusals(spec: RunSpec) -> list[str]:
    """Every combination of settings a run cannot have, in the order they are said."""
    ray, engine = spec.on_ray, spec.engine
    found: list[str] = []
    if spec.backend.kind == "human":
        if ray or spec.batch:
            found.append("--backend human: a person answers in one browser, one trial at a "
                         "time; run it without --executor ray or --batch")
        if spec.variants:
            found.append("--backend human shows each stimulus as stored; --variant changes "
                         "what a model is sent: run the variants on a model")
    if spec.executor == "local":
        if spec.shards is not None:
            found.append("--shards goes with --executor ray (for one shard of a run, "
                         "--shard K/N)")
        if spec.ray_address is not None:
            found.append("--ray-address goes with --executor ray")
    elif spec.shard is not None:
        found.append("--executor ray runs every shard itself; drop --shard (or run one "
                     "shard locally with --shard K/N)")
    if spec.shards is not None and spec.shards < 1:
        found.append("--shards must be at least 1")
    if spec.shards is not None and spec.shards > MAX_RAY_SHARDS:
        found.append(f"--shards {spec.shards}: at most {MAX_RAY_SHARDS} (each shard is a Ray "
                     "task and a folder of its own)")
    if engine.concurrency > defaults.MAX_CONCURRENCY:
        found.append(f"concurrency {engine.concurrency}: at most {defaults.MAX_CONCURRENCY} "
                     "requests in flight per URL")
    if ray and spec.probe_resolution:
        found.append("--probe-resolution measures one endpoint before one process's run; "
                     "with --executor ray run `visioneval probe resolution` once instead")
    if ray and engine.max_cost is not None:
        found.append("--max-cost limits one process's session; with --executor ray every "
                     "shard would get the whole limit: run the shards with --shard K/N and "
                     "a --max-cost each instead")
    if spec.stopping is not None and spec.shard is not None:
        found.append("--target-ci stops one run on its interval; a shard holds part of the "
                     "samples, so run it without --shard")
    if spec.stopping is not None and ray:
        found.append("--target-ci stops one process's run; --executor ray runs shards that "
                     "cannot stop together: run it with --executor local")
    if spec.stopping is not None and spec.variants:
        found.append("--target-ci watches the main number of the samples as asked, not the "
                     "--variant controls: send the variants in a run of their own")
    if spec.stopping is not None and spec.epochs > 1:
        found.append("--target-ci stops on the first answers' interval; --epochs asks every "
                     "sample again: use one or the other")
    if spec.score == "expected" and spec.backend.kind not in ("openai", "openrouter"):
        found.append(f"--score expected reads log-probabilities, which the {spec.backend.kind} "
                     "backend does not give; an OpenAI-compatible server (--backend openai or "
                     "openrouter) gives them where its model does")
    if spec.score == "expected" and spec.batch:
        found.append("--score expected scores each answer as it arrives; send it without "
                     "--batch")
    if spec.probe_resolution and spec.backend.kind in LOCAL_KINDS:
        found.append(f"--probe-resolution: the {spec.backend.kind} backend has no image "
                     "transport to measure; the probe needs a model server")
    if spec.batch:
        if ray or spec.shard is not None:
            found.append("--batch sends the run's batches from one process (the provider "
                         "spreads the work): run it without --shard or --executor ray")
        if spec.stopping is not None:
            found.append("--target-ci stops sending request by request once the answer is "
                         "known, and a batch is sent at once: use one or the other")
        if engine.max_cost is not None:
            found.append(MAX_COST_REFUSED)
    return found


def _one_line(exc: ValidationError) -> str:
    """The first problem: a refusal as it was said, or the field and what is wrong."""
    if exc.errors()[0]["type"] == "value_error":
        return error_message(exc, own_words=True)
    return first_error(exc, whole="spec", count_more=False)
