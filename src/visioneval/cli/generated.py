"""Every registered benchmark's command, generated from its definition: the benchmark's own
options come from its options model (`options_model`, one flag per field: the same model
run.json's `options` and the Python API take), the model, engine and run options are the
same for every benchmark. So a new benchmark needs no edit here."""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Literal,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from visioneval.cli.commandline import (
    aliases,
    flag,
    gone_flags,
    merge_aliases,
    refuse_given,
    run_directory,
    said_after,
    shared_as_declared,
    take_models,
)
from visioneval.cli.options import (
    ApiKeyEnv,
    BackendKind,
    BackoffBase,
    BackoffCap,
    BaseUrl,
    Batch,
    CacheDir,
    CacheKeyUrl,
    Concurrency,
    DryRun,
    Epochs,
    ExecutorOpt,
    JudgePriceIn,
    JudgePriceOut,
    MaxAttempts,
    MaxCost,
    MaxReplyMb,
    MinSamples,
    NoCache,
    NoProgress,
    NoReport,
    PriceIn,
    PriceOut,
    ProbeResolution,
    RayAddressOpt,
    RefreshCache,
    Resume,
    Rpm,
    ScoreOpt,
    ShardOpt,
    ShardsOpt,
    TargetCi,
    Temperature,
    Timeout,
    Tpm,
    VariantOpt,
    Verbose,
    run_command,
)
from visioneval.cli.panels import DATA, MODEL, OUTPUT
from visioneval.commands.flags import Ready, RunFlags, RunTarget, generation
from visioneval.core import registry
from visioneval.core.benchmark import OWN_OPTIONS, BenchmarkDefinition, option_values
from visioneval.core.capabilities import MakesSyntheticData
from visioneval.core.commandline import CommandLine
from visioneval.terminal import line


def _shared(definition: BenchmarkDefinition) -> list[inspect.Parameter]:
    """The options every benchmark command has, in the order --help lists them."""
    def option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                 annotation=annotation)

    backend = Annotated[BackendKind | None, typer.Option(
        metavar="KIND", help="openai, openrouter, ollama, anthropic, builtin or human.",
        show_default=False, rich_help_panel=MODEL)]
    model = Annotated[str | None, typer.Option(metavar="NAME", help=definition.model_help,
                                               show_default=False, rich_help_panel=MODEL)]
    max_tokens = Annotated[int | None, typer.Option(
        min=1, metavar="N", help=definition.max_tokens_help,
        show_default=str(definition.max_tokens), rich_help_panel=MODEL)]
    return [option("backend", backend, None), option("model", model, None),
            option("base_url", BaseUrl, None), option("api_key_env", ApiKeyEnv, None),
            option("temperature", Temperature, None), option("max_tokens", max_tokens, None),
            option("epochs", Epochs, None), option("score", ScoreOpt, None)]


def _out(shown: str, help_text: str = "Run directory.") -> inspect.Parameter:
    return inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=(
        Annotated[Path | None, typer.Option(metavar="DIR", help=help_text,
                                            show_default=shown, rich_help_panel=OUTPUT)]))


def _run_options(judged: bool) -> list[inspect.Parameter]:
    """The engine, cost, output and distribution options; `judged`: the benchmark may ask a
    judge model, whose price has options of its own."""
    judge: list[tuple[str, Any, Any]] = [("judge_price_in", JudgePriceIn, None),
                                         ("judge_price_out", JudgePriceOut, None)]
    specs: list[tuple[str, Any, Any]] = [
        ("resume", Resume, None), ("concurrency", Concurrency, None),
        ("max_attempts", MaxAttempts, None), ("timeout", Timeout, None),
        ("backoff_base", BackoffBase, None), ("backoff_cap", BackoffCap, None),
        ("rpm", Rpm, None), ("tpm", Tpm, None),
        ("no_cache", NoCache, False), ("cache_dir", CacheDir, None),
        ("refresh_cache", RefreshCache, False), ("cache_key_url", CacheKeyUrl, False),
        ("max_reply_mb", MaxReplyMb, None),
        ("price_in", PriceIn, None), ("price_out", PriceOut, None),
        *(judge if judged else []), ("max_cost", MaxCost, None),
        ("target_ci", TargetCi, None), ("min_samples", MinSamples, None),
        ("dry_run", DryRun, False),
        ("no_progress", NoProgress, False), ("no_report", NoReport, False),
        ("verbose", Verbose, False), ("variant", VariantOpt, None),
        ("probe_resolution", ProbeResolution, False),
        ("shard", ShardOpt, None), ("executor", ExecutorOpt, "local"),
        ("shards", ShardsOpt, None), ("ray_address", RayAddressOpt, None),
        ("batch", Batch, False)]
    return [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
            for n, a, d in specs]


SHARED_NAMES = tuple(f.name for f in dataclasses.fields(RunFlags))
"""The shared parameters, one field of RunFlags each."""


def _flags(kwargs: dict[str, Any], keep_model: bool = False) -> RunFlags:
    """The shared flags, taken out of a command's parameters (a command without a judge
    has no judge prices; `keep_model`: --model is the benchmark's own option, left in)."""
    taken: dict[str, Any] = {k: kwargs.get(k) if keep_model and k == "model" else kwargs.pop(k)
                             for k in SHARED_NAMES if k in kwargs}
    return RunFlags(**taken)


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the type inside `X | None` and any `Annotated[X, ...]`, whether None was allowed)."""
    optional = False
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            annotation, optional = args[0], True
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation, optional


def _is_list(annotation: Any) -> bool:
    return get_origin(annotation) in (list, tuple)


def field_flag(model: type[BaseModel], name: str, argument: str | None = None) -> str:
    """How the command line spells an option: its field's `flag`, else --its-name; the
    command's argument by its name."""
    if name == argument:
        return name
    field = model.model_fields.get(name)
    extra = field.json_schema_extra if field is not None and \
        isinstance(field.json_schema_extra, dict) else {}
    return str(extra.get("flag") or flag(name))


def _field_option(name: str, field: FieldInfo, own_panel: str,
                  argument: bool = False) -> inspect.Parameter:
    """One benchmark option: its type as typer knows it, its flags (the field's `flag`, else
    --its-name, and its further `flags`), help, default and panel (the field's `panel`: the
    data's by default, OWN_OPTIONS for the benchmark's own settings). Typer never applies a
    default (None): the model does, so `--resume` needs none of them; --help shows the
    model's (or the field's `shown_default`). `argument`: the command's argument."""
    inner, _ = _unwrap(field.annotation)
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if argument:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Annotated[str | None, typer.Argument(
                                     help=field.description or "", show_default=False)])
    more = extra.get("flags")
    first = str(extra.get("flag") or flag(name))
    flags = [first, *(str(f) for f in (more if isinstance(more, list) else []))]
    help_text = field.description or ""
    panel = str(extra.get("panel", DATA))
    kwargs: dict[str, Any] = {"rich_help_panel": own_panel if panel == OWN_OPTIONS else panel}
    kind: Any
    if get_origin(inner) is Literal:  # checked by the model: one line naming the choices
        values = get_args(inner)
        kind = type(values[0])
        if all(isinstance(v, str) for v in values):
            kwargs["metavar"] = "<" + "|".join(values) + ">"
        else:  # numbers: the choices in the help, the column stays narrow
            kwargs["metavar"] = "N"
            help_text += f" {', '.join(map(str, values[:-1]))} or {values[-1]}."
    elif _is_list(inner):
        kind = str
        kwargs["metavar"] = "A,B"
    elif inner is bool:
        kind = bool
        if field.default is True:
            flags = [f"{first}/--no-{first.removeprefix('--')}"]
    else:
        kind = inner
        kwargs["metavar"] = {int: "N", float: "NUM", Path: "PATH"}.get(inner, "TEXT")
    if "metavar" in extra:
        kwargs["metavar"] = str(extra["metavar"])
    shown = extra.get("shown_default")
    if field.is_required():
        kwargs["show_default"] = False
        help_text += " Required."
    elif shown is not None:
        kwargs["show_default"] = str(shown)
    elif field.default is not None and field.default is not False \
            and field.default not in ((), []):
        default = field.default
        kwargs["show_default"] = ",".join(map(str, default)) if isinstance(default, list) \
            else str(default)
    option = typer.Option(*flags, help=help_text.strip(), **kwargs)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                             annotation=Annotated[kind | None, option])


def _options_from(model: type[BaseModel], given: dict[str, Any],
                  argument: str | None = None) -> BaseModel:
    """The benchmark's options model from the flags given (None: not given, the model's
    default applies); a bad value is one line naming the flag (`argument`: the option given
    as the command's argument)."""
    values = option_values(model, given)
    try:
        return model(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            # A check across options says itself which flags it is about.
            message = str(error["ctx"]["error"]) if error["type"] == "value_error" \
                else error["msg"]
            if not error["loc"]:
                problems.append(message)
                continue
            name = field_flag(model, str(error["loc"][0]), argument)
            if error["type"] == "missing":
                shown = name.upper() if name == argument else name
                problems.append(f"{shown} is required (or --resume RUN_DIR)")
            else:
                problems.append(f"{name}: {message}")
        raise ValueError("; ".join(problems)) from None


def benchmark_command(definition: BenchmarkDefinition) -> Callable[..., None]:
    """The typer command function for `definition` (its signature is built, not written):
    the options model's fields, the shared options, and what the definition's
    `command_line` changes in them (core/commandline.py)."""
    model_cls = definition.options_model
    assert model_cls is not None and definition.command
    cmdline = definition.command_line or CommandLine()
    fields = {n: f for n, f in model_cls.model_fields.items() if n not in cmdline.filled}
    own = {n: _field_option(n, f, f"{definition.name} options", n == cmdline.argument)
           for n, f in fields.items()}
    clash = set(own) & set(SHARED_NAMES) - {cmdline.model_option}
    if clash:
        raise TypeError(f"{definition.name}: option(s) {', '.join(sorted(clash))} are shared "
                        "by every benchmark command; rename them")
    taken = {field_flag(model_cls, n) for n in fields}
    model_flags, refused = shared_as_declared(_shared(definition), cmdline, taken)
    judged = definition.judge_target is not None or cmdline.model_is_judge
    run_flags, refused_run = shared_as_declared(_run_options(judged), cmdline, taken)
    gone = gone_flags(cmdline, {flag(n) for n in SHARED_NAMES})
    refused |= refused_run | {p.name for p in gone}
    ordered = sorted(own.values(), key=lambda p: p.name != cmdline.argument)  # argument first
    parameters = [*model_flags, *ordered, *aliases(cmdline, own),
                  _out(cmdline.out_shown or f"results/{definition.name}-<model>-<time>",
                       cmdline.out_help or "Run directory."), *run_flags, *gone]
    defaults = {p.name: p.default for p in parameters}

    def command(**kwargs: Any) -> None:
        shown = RunFlags(verbose=kwargs["verbose"], no_progress=kwargs["no_progress"],
                         no_report=kwargs["no_report"])
        run_command(shown, lambda: _ready(definition, cmdline, dict(kwargs), refused,
                                          defaults))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = definition.summary
    command.__name__ = definition.name
    return command


def _ready(definition: BenchmarkDefinition, cmdline: CommandLine, values: dict[str, Any],
           refused: set[str], defaults: dict[str, Any]) -> Ready:
    """A generated command's flags and target from its parameters' values: refused flags
    said, other spellings merged, the model flags taken, a new run's directory named."""
    # a run's module: `visioneval --help` loads none
    from visioneval.runs.request import GivenOption

    model_cls = definition.options_model
    assert model_cls is not None
    refuse_given(values, refused, cmdline, defaults)
    merge_aliases(values, cmdline)
    resume = values.get("resume")
    spelled_given = [s.flag for n, s in cmdline.spelled.items()
                     if n in ("backend", "model") and values.get(n)]
    default_model = model_cls.model_fields[cmdline.model_option].get_default() \
        if cmdline.model_option else None
    models = take_models(values, cmdline, resume, default_model)
    flags = dataclasses.replace(_flags(values, keep_model=cmdline.model_option == "model"),
                                backend=models.backend, model=models.model,
                                base_url=models.base_url, api_key_env=models.api_key_env)
    if cmdline.model_is_judge:  # the judges' price is the run's model's unless it has its own
        flags = dataclasses.replace(
            flags, price_in=flags.judge_price_in if flags.price_in is None else flags.price_in,
            price_out=flags.judge_price_out if flags.price_out is None else flags.price_out)
    given = {k: v for k, v in values.items() if v is not None}  # the benchmark's options
    named = {k: field_flag(model_cls, k, cmdline.argument) for k in given}
    again = _taken_on_resume(definition)

    if resume is not None:
        fixed: list[str] = []
        restated: dict[str, GivenOption] = {}
        if cmdline.resume_refuses_options:
            fixed = [named[k] for k in given if k not in again] + spelled_given \
                + (["--out"] if flags.out is not None else [])
        else:
            restated = {k: GivenOption(named[k], v) for k, v in given.items()
                        if k not in again}
        return Ready(flags, RunTarget(
            definition.name, fixed=fixed, restated=restated,
            resume_options={k: v for k, v in given.items() if k in again} | dict(
                models.options), backend_required=not cmdline.model_optional),
            then=said_after(cmdline, resume, flags.dry_run))

    values = given | dict(models.options)
    note = None
    if flags.out is not None and cmdline.out_given is not None:
        out = cmdline.out_given(flags.out, values)
        flags, values, note = dataclasses.replace(flags, out=out.directory), \
            dict(out.values), out.note
    directory = run_directory(flags, definition.name)
    flags = dataclasses.replace(flags, out=directory)
    made: list[BaseModel] = []

    def options() -> BaseModel:  # read once, for the benchmark and its settings
        if not made:
            made.append(_options_from(model_cls, values, cmdline.argument))
        return made[0]

    def benchmark():
        built = definition.from_command(options())
        if cmdline.model_optional and flags.model is None and (use := built.model_use()):
            spelled = [cmdline.spelled[n].flag if n in cmdline.spelled else flag(n)
                       for n in ("backend", "model")]
            hint = f" ({cmdline.model_hint})" if cmdline.model_hint else ""
            raise ValueError(f"{use}: give {spelled[0]} and {spelled[1]}{hint}")
        if note is not None:
            # a run's module: `visioneval --help` loads none
            from visioneval.commands.common import consoles

            line(consoles()[1], note)
        return built

    def generation():
        if cmdline.settings is not None:
            return cmdline.settings(options())
        return settings(flags.temperature, flags.max_tokens, definition.max_tokens)

    return Ready(flags, RunTarget(definition.name, benchmark, generation,
                                  backend_required=not cmdline.model_optional),
                 then=said_after(cmdline, directory, flags.dry_run))


def any_benchmark_command(registered: Sequence[str] = ()) -> Callable[..., None]:
    """`visioneval run SPEC`: any registered benchmark or a user's own definition given as
    module:attribute, its options as repeated `--option key=value` (no generated flags:
    the benchmark is only known once SPEC is read). `registered`: the benchmarks it runs,
    named in its --help's paragraph."""
    # The registered names go in the command's paragraph, which wraps as prose: in the
    # argument's column they would outgrow one line as benchmarks are added.
    shown = "A registered benchmark, or your own definition (module:attribute)."
    spec_arg = inspect.Parameter("benchmark", inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Annotated[str | None, typer.Argument(
                                     help=shown, show_default=False)])
    option = inspect.Parameter("option", inspect.Parameter.KEYWORD_ONLY, default=None,
                               annotation=Annotated[list[str] | None, typer.Option(
                                   "--option", "-o", metavar="KEY=VALUE",
                                   help="The benchmark's own option; repeat for each.",
                                   rich_help_panel="Benchmark options")])
    spec_file = inspect.Parameter("spec", inspect.Parameter.KEYWORD_ONLY, default=None,
                                  annotation=Annotated[Path | None, typer.Option(
                                      "--spec", metavar="FILE", help="Run what FILE says "
                                      "again: a run's run.json, or a RunSpec as JSON.",
                                      show_default=False, rich_help_panel=OUTPUT)])
    base = BenchmarkDefinition()
    parameters = [spec_arg, *_shared(base), option,
                  _out("results/<benchmark>-<model>-<time>"), spec_file,
                  *_run_options(False)]

    def command(**kwargs: Any) -> None:
        # a run's module: `visioneval --help` loads none
        from visioneval.runs.request import GivenOption

        flags = _flags(kwargs)
        target, pairs = kwargs["benchmark"], kwargs["option"] or []
        from_file: Path | None = kwargs["spec"]
        definition_ref = None if target is None or target in registry.names() \
            else registry.portable(target)
        values = dict(_pair(p) for p in pairs)
        again: dict[str, Any] = {}
        restated: dict[str, GivenOption] = {}
        if from_file is not None:  # the file names the benchmark: --option may grant trust
            again = values
        elif flags.resume is not None and values:
            # The options a resume takes again come with it; the others are compared with
            # the run's record (loading the definition the command line names, never one a
            # run directory names).
            known = _taken_on_resume(registry.definition(target)) if target else set()
            again = {k: v for k, v in values.items() if k in known}
            restated = {k: GivenOption(f"--option {k}", v) for k, v in values.items()
                        if k not in known}

        def benchmark():
            if target is None:
                raise ValueError("name the benchmark (or --resume RUN_DIR)")
            definition = registry.definition(target)
            model = definition.options_model
            if model is None or not definition.command:
                raise ValueError(f"{target} has no command options; run it with its own "
                                 "command")
            if found := definition.unknown_option(values):
                raise ValueError(f"--option {found[0]}: {found[1]}")
            return definition.from_command(_options_from(model, values))

        def max_tokens_default() -> int:
            return registry.definition(target).max_tokens if target else \
                BenchmarkDefinition.max_tokens

        run_command(flags, RunTarget(
            None, benchmark,
            lambda: settings(flags.temperature, flags.max_tokens, max_tokens_default()),
            definition=definition_ref, restated=restated, resume_options=again,
            spec_file=from_file))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    named = f" ({', '.join(registered)})" if registered else ""
    command.__doc__ = (f"Run any benchmark: a registered one{named}, or your own definition "
                       "(module:attribute), with its options as --option key=value.")
    return command


def _taken_on_resume(definition: BenchmarkDefinition) -> set[str]:
    """The benchmark's options a resume takes from the command line (a judge's server and
    key, trust): giving them again is how a resume gets them."""
    return set(definition.judge_target or ()) | set(definition.trust_options)


def _pair(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise ValueError(f"--option {text!r}: write key=value")
    return key.strip().replace("-", "_"), value


def settings(temperature: float | None, max_tokens: int | None, default_max_tokens: int):
    """The generation settings from the flags (None: not given, the default applies)."""
    return generation(temperature, max_tokens, default_max_tokens)


def synth_command(definition: MakesSyntheticData) -> Callable[..., None]:
    """`visioneval data synth-NAME`: the benchmark's offline dataset in its real schema.
    A definition with a `synth_options` model gets one more flag per field, and its `synth`
    that model as a fourth argument."""
    own: type[BaseModel] | None = getattr(definition, "synth_options", None)

    def command(
        out: Annotated[Path, typer.Option(metavar="DIR", help="Folder to write the dataset "
                                          "into.")],
        n: Annotated[int, typer.Option(min=1, help="Rows per part.")] = definition.synth_rows,
        seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
        overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
        **given: Any,
    ) -> None:
        def write(into: Path) -> list[str]:
            if own is None:
                return definition.synth(into, n, seed)
            options = _options_from(own, given)  # a bad value: one line naming its flag
            return definition.synth(into, n, seed, options)  # type: ignore[call-arg]

        write_synth(out, overwrite, write)

    hints = get_type_hints(command, include_extras=True)
    parameters = [p.replace(annotation=hints[p.name])
                  for p in inspect.signature(command).parameters.values()
                  if p.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters += [_field_option(name, field, "Options")
                   for name, field in (own.model_fields.items() if own else ())]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = definition.synth_help
    return command


OVERWRITE_HELP = ("Replace what the folder holds (runs that read it can then no longer "
                  "resume); without it a folder that holds files is refused.")


def write_synth(out: Path, overwrite: bool, write: Callable[[Path], list[str]]) -> None:
    """A `data synth-*` command's body (`commands.data.write_synth`)."""
    # a command's body: `visioneval --help` loads none
    from visioneval.commands.data import write_synth as command

    code = command(out, overwrite, write)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add every registered benchmark's command (and data command) to the app."""
    definitions = [registry.definition(name) for name in registry.names()]
    app.command(name="run")(any_benchmark_command(
        [d.name for d in definitions if d.command_options is not None]))
    for name, definition in zip(registry.names(), definitions, strict=True):
        if definition.options_model is not None and definition.command:
            app.command(name=name, help=definition.summary)(benchmark_command(definition))
        if isinstance(definition, MakesSyntheticData):
            data_app.command(f"synth-{name}", help=definition.synth_help)(
                synth_command(definition))
