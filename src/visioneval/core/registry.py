"""Benchmark names -> definitions, imported lazily. A new benchmark is one line here.

A definition (`benchmarks.base.BenchmarkDefinition`) builds the benchmark from the options
recorded in run.json and says how its runs are shown. Nothing else in visioneval names a
benchmark.

A run directory is data, and may come from anyone: `for_run` is the one place that turns a
run.json into a definition, and it never imports code the run names (see its docstring)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.runfiles import RunInfo

DEFINITIONS = {
    "salbench": "visioneval.benchmarks.salbench.definition:DEFINITION",
    "illusionbench": "visioneval.benchmarks.illusionbench.definition:DEFINITION",
    "mmvp": "visioneval.benchmarks.mmvp.definition:DEFINITION",
    "naturalbench": "visioneval.benchmarks.naturalbench.definition:DEFINITION",
    "hallusionbench": "visioneval.benchmarks.hallusionbench.definition:DEFINITION",
    "pope": "visioneval.benchmarks.pope.definition:DEFINITION",
    "blink": "visioneval.benchmarks.blink.definition:DEFINITION",
    "blindtest": "visioneval.benchmarks.blindtest.definition:DEFINITION",
    "cvbench": "visioneval.benchmarks.cvbench.definition:DEFINITION",
    "evaluate": "visioneval.evaluators.definition:DEFINITION",
    "vqa": "visioneval.benchmarks.vqa.definition:DEFINITION",
    "layout": "visioneval.benchmarks.layout.definition:DEFINITION",
    "psychophysics": "visioneval.benchmarks.psychophysics.definition:DEFINITION",
    "vernier": "visioneval.benchmarks.vernier.definition:DEFINITION",
    "crowding": "visioneval.benchmarks.crowding.definition:DEFINITION",
    "contrast": "visioneval.benchmarks.contrast.definition:DEFINITION",
    "numerosity": "visioneval.benchmarks.numerosity.definition:DEFINITION",
    "touching": "visioneval.benchmarks.touching.definition:DEFINITION",
    "illusions": "visioneval.benchmarks.illusions.definition:DEFINITION",
    "graphical": "visioneval.benchmarks.graphical.definition:DEFINITION",
}
DEMO = "salbench"  # `visioneval demo` runs this benchmark's offline demo


def names() -> list[str]:
    return list(DEFINITIONS)


def definition(name: str) -> BenchmarkDefinition:
    """The definition registered as `name`, or one given as `module:attribute` (a user's
    own benchmark in their own file or package), which is imported: only for a name the
    user gave (a command's argument, `--definition`, Python), never one read from a run."""
    target = DEFINITIONS.get(name)
    if target is None:
        if ":" not in name:
            raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(DEFINITIONS)} "
                             "(or module:attribute naming your own definition)")
        target = name
    module, _, attribute = target.rpartition(":")
    try:
        found = _attribute(_load_module(module), attribute)
    except (ImportError, AttributeError, OSError, SyntaxError) as exc:
        raise ValueError(f"cannot load benchmark {name!r}: {exc}") from None
    made = _instance(found)
    if made is None:
        raise ValueError(f"{name!r} is not a BenchmarkDefinition (it is {type(found).__name__})")
    return made


def _attribute(module: ModuleType, attribute: str) -> Any:
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def _instance(found: Any) -> BenchmarkDefinition | None:
    """A definition object, or its class instantiated; None for anything else (no other
    class is ever called)."""
    if isinstance(found, type) and issubclass(found, BenchmarkDefinition):
        found = found()
    return found if isinstance(found, BenchmarkDefinition) else None


def portable(ref: str) -> str:
    """A user's `file.py:attribute` with the file's absolute path (what run.json keeps, so
    a resume from another folder finds it); a module name as it is."""
    module, sep, attribute = ref.rpartition(":")
    path = Path(module)
    if sep and (module.endswith(".py") or path.is_file()):
        return f"{path.resolve()}:{attribute}"
    return ref


def _load_module(module: str) -> ModuleType:
    """An importable module, or a Python file (`path/to/file.py`, or `name` when
    `name.py` is in the current folder). A file is imported once per process, as `import`
    would, under a name made from its resolved path (`_file_key`)."""
    path = Path(module if module.endswith(".py") else f"{module}.py")
    if not module.endswith(".py"):
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError:
            if not path.is_file():
                raise
    key = _file_key(path)
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[key] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        del sys.modules[key]
        raise
    return loaded


def _file_key(path: Path) -> str:
    """The module name a user's file is imported under: one per file, whatever path or
    name it was given by."""
    resolved = str(path.resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:16]
    stem = re.sub(r"\W", "_", path.stem)
    return f"visioneval_user_{stem}_{digest}"


def imported_here(info: RunInfo) -> BenchmarkDefinition | None:
    """The user's definition run.json records, if this process has already imported its
    module, and None otherwise; nothing is imported here. For the report at the end of a
    run (`report.page.try_write_report`): the process that has just run a benchmark has
    run its code, so drawing the page with it runs nothing new, whereas a definition the
    process has not run (a resume given another one) stays untrusted."""
    recorded = info.definition
    if recorded is None or ":" not in recorded or _OURS.fullmatch(recorded):
        return None
    module, _, attribute = recorded.rpartition(":")
    if module.endswith(".py"):
        loaded = sys.modules.get(_file_key(Path(module)))
    else:
        loaded = sys.modules.get(module) or sys.modules.get(_file_key(Path(f"{module}.py")))
    if loaded is None:
        return None
    try:
        return _instance(_attribute(loaded, attribute))
    except AttributeError:
        return None


def build(name: str, options: dict[str, Any]) -> Benchmark:
    """The benchmark `name` (as `definition` takes it: a name the user gave) with `options`."""
    return definition(name).build(options)


class UntrustedRun(ValueError):
    """A run's benchmark is not one of visioneval's and no definition was named for it; the
    message is the one line that says so and how to trust it."""


_OURS = re.compile(r"visioneval\.(?:benchmarks|evaluators)(?:\.[A-Za-z_]\w*)+:[A-Za-z_][\w.]*")
"""A definition inside visioneval's own benchmark code (a re-scored run records one):
importing it runs nothing but visioneval."""

MOVED = {
    "visioneval.benchmarks.salbench.lmms_eval:RESCORED":
        "visioneval.benchmarks.salbench.definition:RESCORED",
    "visioneval.benchmarks.illusionbench.lmms_eval:RESCORED":
        "visioneval.benchmarks.illusionbench.definition:RESCORED",
}
"""visioneval's own definitions that moved, as run.json files of earlier versions name them."""

Named = BenchmarkDefinition | str | None


SHOWN = "it is shown without its benchmark's tables and thumbnails"
"""What reading a run of an unnamed definition does instead (`for_run`'s default)."""


def for_run(info: RunInfo, named: Named = None,
            directory: Path | str | None = None, *, instead: str = SHOWN
            ) -> BenchmarkDefinition:
    """The definition to read, rebuild or resume the run whose run.json is `info`.

    The trust rule: reading a run never imports code the run names. run.json's `benchmark`
    is looked up among the registered names only, and a `definition` is used only when it is
    visioneval's own (a module under visioneval.benchmarks or visioneval.evaluators, as a
    re-scored run records). A run of a user's own benchmark (a `definition` elsewhere, or a
    `benchmark` that is not a registered name) is trusted only when the user names its
    definition again (`named`: `--definition module:attribute` on the command line, or the
    definition object in Python), whose name must be the run's benchmark.

    Otherwise UntrustedRun, whose message is the one line to show: which run (`directory`),
    why, what happens `instead`, and the --definition that would trust it. A named
    definition that cannot be loaded or does not match the run is a plain ValueError.
    """
    benchmark = info.benchmark
    recorded = info.definition
    where = f"{directory}: " if directory is not None else ""
    if named is not None:
        found = named if isinstance(named, BenchmarkDefinition) else definition(named)
        name = getattr(found, "name", None)
        if name != benchmark:
            label = named if isinstance(named, str) else type(named).__qualname__
            raise ValueError(f"{where}--definition {label} defines benchmark {name!r}, but "
                             f"this is a run of {benchmark!r}")
        return found
    never = "visioneval never imports code that a run directory names"
    if recorded:
        if _OURS.fullmatch(recorded):
            return _ours(recorded)
        raise UntrustedRun(f"{where}a run of your own benchmark {benchmark!r} ({recorded}); "
                           f"{never}, so {instead}. If you trust that code, add "
                           f"--definition {_quoted(recorded)}")
    if benchmark in DEFINITIONS:
        return definition(benchmark)
    raise UntrustedRun(f"{where}run.json names benchmark {benchmark!r}, which is not one of "
                       f"visioneval's ({', '.join(DEFINITIONS)}); {never}, so {instead}. If "
                       "it is your own benchmark and you trust its code, add "
                       "--definition module:attribute")


def build_for_run(info: RunInfo, named: Named = None,
                  directory: Path | str | None = None, *, to_read: bool = False,
                  instead: str = "its benchmark cannot be rebuilt") -> Benchmark:
    """The benchmark of the run whose run.json is `info`, by `for_run`'s trust rule: a run
    of a user's own benchmark needs its definition `named`, else UntrustedRun (a
    ValueError: the one line, saying what happens `instead`). `to_read`: rebuilt only to
    read the run (thumbnails, metrics recomputed by a merge or compare), with whatever would
    let it run code or read beyond its data off (`BenchmarkDefinition.build_to_read`);
    False: to run it (resume)."""
    found = for_run(info, named, directory, instead=instead)
    options = dict(info.options)
    return found.build_to_read(options) if to_read else found.build(options)


def _ours(ref: str) -> BenchmarkDefinition:
    """One of visioneval's own definitions, imported as a module (never a file)."""
    module, _, attribute = MOVED.get(ref, ref).partition(":")
    try:
        found = _instance(_attribute(importlib.import_module(module), attribute))
    except (ImportError, AttributeError) as exc:
        raise UntrustedRun(f"cannot load visioneval's definition {ref!r}: {exc}") from None
    if found is None:
        raise UntrustedRun(f"{ref!r} is not a BenchmarkDefinition")
    return found


def _quoted(ref: str) -> str:
    """A module:attribute as a shell word."""
    return shlex.quote(ref)
