"""Benchmark names -> definitions, imported lazily. A new benchmark is one line here.

A definition (`benchmarks.base.BenchmarkDefinition`) builds the benchmark from the options
recorded in run.json, so `--resume` can rebuild any run from its directory alone, and says
how its runs are shown. Nothing else in visioneval names a benchmark."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from visioneval.benchmarks.base import Benchmark, BenchmarkDefinition

DEFINITIONS = {
    "salbench": "visioneval.benchmarks.salbench.definition:DEFINITION",
    "illusionbench": "visioneval.benchmarks.illusionbench.definition:DEFINITION",
    "evaluate": "visioneval.evaluators.definition:DEFINITION",
    "vqa": "visioneval.benchmarks.vqa.definition:DEFINITION",
}
DEMO = "salbench"  # `visioneval demo` runs this benchmark's offline demo


def names() -> list[str]:
    return list(DEFINITIONS)


def definition(name: str) -> BenchmarkDefinition:
    """The definition registered as `name`, or one given as `module:attribute` (a user's
    own benchmark in their own file or package)."""
    target = DEFINITIONS.get(name)
    if target is None:
        if ":" not in name:
            raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(DEFINITIONS)} "
                             "(or module:attribute naming your own definition)")
        target = name
    module, _, attribute = target.rpartition(":")
    try:
        found = getattr(_load_module(module), attribute)
    except (ImportError, AttributeError, OSError, SyntaxError) as exc:
        raise ValueError(f"cannot load benchmark {name!r}: {exc}") from None
    if isinstance(found, type):
        found = found()
    if not isinstance(found, BenchmarkDefinition):
        raise ValueError(f"{name!r} is not a BenchmarkDefinition (it is {type(found).__name__})")
    return found


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
    `name.py` is in the current folder)."""
    path = Path(module if module.endswith(".py") else f"{module}.py")
    if not module.endswith(".py"):
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError:
            if not path.is_file():
                raise
    spec = importlib.util.spec_from_file_location(f"visioneval_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def build(name: str, options: dict[str, Any]) -> Benchmark:
    return definition(name).build(options)
