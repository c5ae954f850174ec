"""How a benchmark's generated command departs from the flags every run command shares, said
as data on its definition (`BenchmarkDefinition.command_line`): the command is still built
from the options model (cli/generated.py), and this says only what differs.

`evaluate` names its model the judge (`--judge-model`, repeated for several judges) and
takes its generation settings from its own options; `layout` keeps CANVAS's spellings
(`--variant` for its variant folders, hidden `--base_dir`), asks no model under test, and
says where its results file is after the run. A flag that does not apply is refused in one
line that names it and says why."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from visioneval.core.records import GenerationSettings


@dataclass(frozen=True)
class Spelled:
    """A shared model flag under the benchmark's own name (`--judge-model` for `--model`),
    with the help that name needs."""

    flag: str
    help: str
    shown_default: str | None = None


@dataclass(frozen=True)
class Refused:
    """Flags that do not apply to this benchmark, and why (said as `FLAG: why`). A shared
    flag whose spelling an option of the benchmark takes (layout's `--variant`) is that
    option instead; any other is kept, hidden, to say why when given."""

    flags: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class ModelsGiven:
    """The model flags as given, each as a list (`Spelled` flags may be repeated)."""

    backend: tuple[str, ...] = ()
    model: tuple[str, ...] = ()
    base_url: tuple[str, ...] = ()
    api_key_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelsTaken:
    """What the model flags make: the run's model (one), and options for the others
    (a new run: values of the options model, such as evaluate's `panel`; a resume: what
    the definition's `resumed_options` reads, such as the further judges' servers)."""

    backend: str | None = None
    model: str | None = None
    base_url: list[str] | None = None
    api_key_env: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OutGiven:
    """What a new run's `--out` names: the run directory, the option values it sets (an
    earlier results file to read), and a note to say (None: nothing to say)."""

    directory: Path
    values: Mapping[str, Any]
    note: str | None = None


@dataclass(frozen=True)
class Closing:
    """What to say after a run has finished (exit 0 or 1): `lines` on the output, and
    `problems` on the error stream, which make the exit code at least 1."""

    lines: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandLine:
    """A generated command's departures from the shared flags.

    - `spelled`: shared model flags ("backend", "model", "base_url", "api_key_env") under
      the benchmark's names, listed in `model_panel`; with `models`, they may be repeated and
      `models(given, resume)` makes the run's model and the options for the others
      (`filled`: the options it fills, which are no flags).
    - `model_optional`: the run may need no model (evaluate's validators alone); without
      one, the benchmark's `model_use()` says whether something needs it.
    - `model_hint`: said after the flags a missing model needs ("a vision-capable model").
    - `model_option`: the option naming the run's model when nothing is asked of a model
      (layout: the folder of the model whose layouts are scored; backend "none").
    - `model_is_judge`: the run's model is the benchmark's judge, so --judge-price-in and
      --judge-price-out price it unless --price-in and --price-out say otherwise.
    - `settings`: the generation settings from the options (the shared --temperature and
      --max-tokens do not apply; refuse them).
    - `refused`: flags that do not apply, with why.
    - `aliases`: more spellings of an option (hidden), by its name.
    - `argument`: the option given as the command's argument (evaluate's case file).
    - `resume_refuses_options`: a resume refuses the benchmark's options given with it
      (True), rather than comparing them with the run's record.
    - `out_help`, `out_shown`: --out's help and default as --help shows them ("": the
      shared ones); `out_given`: what a new run's --out names (layout's FILE.json).
    - `closing`: what to say after a finished run, read from its directory."""

    spelled: Mapping[str, Spelled] = field(default_factory=dict)
    model_panel: str = "Model and endpoints"
    models: Callable[[ModelsGiven, Path | None], ModelsTaken] | None = None
    filled: tuple[str, ...] = ()
    model_optional: bool = False
    model_hint: str = ""
    model_option: str | None = None
    model_is_judge: bool = False
    settings: Callable[[BaseModel], GenerationSettings] | None = None
    refused: tuple[Refused, ...] = ()
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    argument: str | None = None
    resume_refuses_options: bool = False
    out_help: str = ""
    out_shown: str = ""
    out_given: Callable[[Path, Mapping[str, Any]], OutGiven] | None = None
    closing: Callable[[Path], Closing] | None = None

    def refusal(self, flag: str) -> str | None:
        """Why `flag` does not apply here (None: it does)."""
        return next((r.why for r in self.refused if flag in r.flags), None)
