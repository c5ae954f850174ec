"""What a definition's `CommandLine` (core/commandline.py) changes in its generated command:
the shared options under its spellings, hidden or left out where they do not apply, more
spellings of its own options, and the steps around the run (the model flags taken, the run
directory named before the run, the lines said after it)."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from visioneval.core.commandline import CommandLine, ModelsGiven, ModelsTaken
from visioneval.terminal import line as say_line

if TYPE_CHECKING:
    from visioneval.commands.flags import RunFlags
    from visioneval.runs.output import Output

MODEL_FLAGS = ("backend", "model", "base_url", "api_key_env")
REFUSED = "refused_"  # the parameter name of a refused flag that is no shared option


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _hidden(parameter: inspect.Parameter) -> inspect.Parameter:
    """The same option, left out of --help."""
    annotation = parameter.annotation
    infos = [copy.copy(info) for info in annotation.__metadata__]
    for info in infos:
        if isinstance(info, typer.models.OptionInfo):
            info.hidden = True
    return parameter.replace(annotation=Annotated[(annotation.__origin__, *infos)])


def spelled(parameter: inspect.Parameter, line: CommandLine) -> inspect.Parameter:
    """A shared model option under the benchmark's spelling (`line.spelled`), in its panel;
    with `line.models`, it may be repeated (one per model)."""
    spelling = line.spelled[parameter.name]
    annotation = parameter.annotation
    kind, info = annotation.__origin__, annotation.__metadata__[0]
    if line.models is not None and parameter.name != "base_url":
        kind = list[_inner(kind)] | None  # type: ignore[misc]
    option = typer.Option(spelling.flag, metavar=info.metavar, help=spelling.help,
                          show_default=spelling.shown_default or False,
                          rich_help_panel=line.model_panel)
    return parameter.replace(annotation=Annotated[kind, option])


def _inner(kind: Any) -> Any:
    """`X | None` -> X."""
    args = [a for a in getattr(kind, "__args__", (kind,)) if a is not type(None)]
    return args[0]


def shared_as_declared(parameters: Iterable[inspect.Parameter], line: CommandLine,
                       taken: set[str]) -> tuple[list[inspect.Parameter], set[str]]:
    """The shared options as this command has them: spelled its way, hidden when refused
    (to say why when given), left out where an option of its own names the run's model or
    takes their spelling (`taken`: its own flags); and the names of the refused ones."""
    out, refused = [], set()
    for parameter in parameters:
        name, spelling = parameter.name, flag(parameter.name)
        if name in line.spelled:
            out.append(spelled(parameter, line))
        elif name == "model" and line.model_option is not None:
            continue  # the option that names the run's model is its --model
        elif spelling in taken:
            if line.refusal(spelling) is None:
                raise TypeError(f"{spelling} is a shared option and an option of this "
                                "benchmark: refuse the shared one in its CommandLine, or "
                                "rename its own")
        elif line.refusal(spelling) is not None:
            out.append(_hidden(parameter))
            refused.add(name)
        else:
            out.append(parameter)
    return out, refused


def gone_flags(line: CommandLine, known: set[str]) -> list[inspect.Parameter]:
    """Refused flags that are no shared option (an older spelling the command no longer
    takes): hidden options that say why."""
    return [inspect.Parameter(
        REFUSED + spelling.lstrip("-").replace("-", "_"), inspect.Parameter.KEYWORD_ONLY,
        default=None, annotation=Annotated[str | None, typer.Option(spelling, hidden=True)])
        for refused in line.refused for spelling in refused.flags if spelling not in known]


def refuse_given(values: dict[str, Any], names: Iterable[str], line: CommandLine,
                 defaults: Mapping[str, Any]) -> None:
    """A refused flag given: one line naming it and why (ValueError). Their parameters
    (`names`) are taken out of `values`."""
    for name in names:
        value, default = values.pop(name, None), defaults.get(name)
        if value is None or value is False or value == [] or \
                (default is not None and default is not False and value == default):
            continue  # not given (a default such as --executor local)
        spelling = flag(name.removeprefix(REFUSED))
        raise ValueError(f"{spelling}: {line.refusal(spelling)}")


def aliases(line: CommandLine, own: Mapping[str, inspect.Parameter]
            ) -> list[inspect.Parameter]:
    """Each further spelling of an option (`line.aliases`) as a hidden option of its own."""
    out = []
    for name, spellings in line.aliases.items():
        annotation = own[name].annotation
        for k, spelling in enumerate(spellings):
            out.append(inspect.Parameter(
                f"{name}__{k}", inspect.Parameter.KEYWORD_ONLY, default=None,
                annotation=Annotated[annotation.__origin__, typer.Option(spelling,
                                                                         hidden=True)]))
    return out


def merge_aliases(values: dict[str, Any], line: CommandLine) -> None:
    """An option given by another spelling is the option (taken out of `values`)."""
    for name, spellings in line.aliases.items():
        for k in range(len(spellings)):
            value = values.pop(f"{name}__{k}", None)
            if value is not None and values.get(name) is None:
                values[name] = value


def _listed(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list | tuple) else [value]
    return tuple(str(getattr(v, "value", v)) for v in items)


def take_models(values: dict[str, Any], line: CommandLine, resume: Path | None,
                model_default: Any) -> ModelsTaken:
    """The run's model from the model flags (taken out of `values`): as given, through the
    definition's `models` (several models), or named by an option when nothing is asked of
    a model (`model_option`: backend "none", a new run only)."""
    given = {name: values.pop(name, None) for name in MODEL_FLAGS
             if name in values and name != line.model_option}
    if line.models is not None:
        return line.models(ModelsGiven(*(_listed(given.get(n)) for n in MODEL_FLAGS)),
                           resume)
    if line.model_option is not None:
        if resume is not None:
            return ModelsTaken()
        named = values.get(line.model_option)
        return ModelsTaken("none", str(model_default if named is None else named))
    backend = given.get("backend")
    return ModelsTaken(None if backend is None else str(getattr(backend, "value", backend)),
                       given.get("model"), given.get("base_url"), given.get("api_key_env"))


def run_directory(flags: RunFlags, name: str) -> Path:
    """Where a new run goes, named before it starts (so a command can say what it holds at
    the end): --out, else results/<benchmark>-<model>-<time>, a shard's with its shard in
    the name; absolute for Ray, whose tasks run elsewhere."""
    # a run's module: `visioneval --help` loads none
    from visioneval.runs.session import run_dir_for

    shard, executor = flags.spread()
    return run_dir_for(flags.out, name, flags.model or "none",
                       shard if executor == "local" else None, executor == "ray")


def said_after(line: CommandLine, directory: Path, dry_run: bool
               ) -> Callable[[int, Output], int] | None:
    """What the command says after a finished run (exit 0 or 1), from `line.closing`: its
    lines, and its problems, which make the exit code at least 1."""
    if line.closing is None or dry_run:
        return None
    closing = line.closing

    def say(code: int, output: Output) -> int:
        if code not in (0, 1):
            return code
        found = closing(directory)
        for text in found.lines:
            say_line(output.console, text)
        for text in found.problems:
            say_line(output.err, text, style="yellow")
        return max(code, 1) if found.problems else code

    return say
