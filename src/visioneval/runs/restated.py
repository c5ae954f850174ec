"""A new run's flags given again with `--resume` (the same command line with `--resume DIR`
in place of `--out DIR`): a flag that says what the run recorded is taken, a flag that
changes it is refused, one line per flag naming the flag, the recorded value and the given
one. Values are compared as the run records them: paths resolved, comma lists as lists,
SalBench's --splits/--tasks as the configs they make, variants as their names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition, option_values
from visioneval.core.runfiles import RunInfo
from visioneval.runs.request import GivenOption, Restated
from visioneval.shards import Shard
from visioneval.validation import error_message
from visioneval.variants.family import Varied
from visioneval.variants.kinds import parse


def check_restated(info: RunInfo, definition: BenchmarkDefinition, benchmark: Benchmark,
                   restated: Restated, directory: Path | None) -> None:
    """ValueError with one line per flag whose value differs from the run's record."""
    lines = [*_shared(info, benchmark, restated, directory),
             *_options(definition, info.options, restated.options)]
    if lines:
        lines.append("--resume continues the run as recorded: drop "
                     + ("these flags" if len(lines) > 1 else "the flag")
                     + " or give the recorded value; a change is a new run (--out DIR)")
        raise ValueError("\n".join(lines))


def _differs(flag: str, recorded: Any, given: Any) -> str:
    return f"{flag}: the run recorded {_shown(recorded)}, given {_shown(given)}"


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) if value else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _shared(info: RunInfo, benchmark: Benchmark, restated: Restated,
            directory: Path | None) -> Iterator[str]:
    """The model, generation settings, output folder, variants, probe, batch and shard."""
    backend, settings = info.backend, info.generation.settings()
    pairs: list[tuple[str, Any, Any]] = [
        ("--backend", backend.kind, restated.backend),
        ("--model", backend.model, restated.model),
        ("--temperature", settings.temperature, restated.temperature),
        ("--max-tokens", settings.max_tokens, restated.max_tokens)]
    for flag, recorded, given in pairs:
        if given is not None and given != recorded:
            yield _differs(flag, recorded, given)
    if restated.out is not None and (directory is None
                                     or restated.out.resolve() != directory.resolve()):
        yield (f"--out: the run is in {directory}, given {restated.out}; --resume continues "
               "the run where it is")
    if restated.variants:
        inner = benchmark.inner if isinstance(benchmark, Varied) else benchmark
        given_names = [v.name for v in parse(restated.variants, inner.own_variants())]
        recorded_names = [v.name for v in info.variants or () if not v.read_by_benchmark]
        if sorted(given_names) != sorted(recorded_names):
            yield _differs("--variant", recorded_names, given_names)
    if restated.epochs is not None and restated.epochs != (info.epochs or 1):
        yield _differs("--epochs", info.epochs or 1, restated.epochs)
    if restated.score is not None and restated.score != (info.score or "sampled"):
        yield _differs("--score", info.score or "sampled", restated.score)
    if restated.probe_resolution and info.resolution_probe is None:
        yield _differs("--probe-resolution", "no probe", "--probe-resolution")
    if restated.batch and info.batch is None:
        yield ("--batch: the run was sent request by request, and --resume continues it "
               "that way")
    if restated.shard is not None:
        recorded = info.shard.label if info.shard is not None else "all the samples"
        if info.shard is None or Shard.parse(restated.shard) != info.shard:
            yield _differs("--shard", recorded, restated.shard)


def _options(definition: BenchmarkDefinition, recorded: Mapping[str, Any],
             given: Mapping[str, GivenOption]) -> Iterator[str]:
    """The benchmark's options: the recorded ones with the given flags laid over them,
    checked by the options model, against the recorded ones checked the same way. An
    option that is not recorded itself (`recorded_as` in its field: SalBench's --splits
    makes `configs`) is compared as the option it makes."""
    model = definition.options_model
    if not given or model is None:
        return
    unknown = [g.flag for name, g in given.items() if name not in model.model_fields]
    if unknown:
        yield f"{', '.join(unknown)}: {definition.name} has no such option"
        return
    made = {name: _recorded_as(model, name) for name in given}
    laid = {k: v for k, v in recorded.items() if k not in made.values()}
    laid |= option_values(model, {name: g.value for name, g in given.items()})
    try:
        before = definition.validate_options(dict(recorded)).model_dump(mode="json")
        after = model.model_validate(laid).model_dump(mode="json")
    except (ValidationError, ValueError) as exc:
        yield f"{', '.join(g.flag for g in given.values())}: {_first_error(exc)}"
        return
    by_key: dict[str, list[str]] = {}
    for name, key in made.items():
        by_key.setdefault(key, []).append(given[name].flag)
    for key, flags in by_key.items():
        if before.get(key) == after.get(key):
            continue
        shown = ", ".join(flags)
        if key in given and flags == [given[key].flag]:
            yield _differs(shown, before.get(key), after.get(key))
        else:
            yield (f"{shown}: the run recorded {key} {_shown(before.get(key))}, given "
                   f"{key} {_shown(after.get(key))}")


def _recorded_as(model: type[BaseModel], name: str) -> str:
    """The recorded option a flag's value ends up in: its own, or the one its field names."""
    extra = model.model_fields[name].json_schema_extra
    made = extra.get("recorded_as") if isinstance(extra, dict) else None
    return str(made) if made else name


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return error_message(exc, own_words=True)
    return str(exc)
