"""Benchmark names -> definitions, imported lazily. A new benchmark is one line here.

A definition (`benchmarks.base.BenchmarkDefinition`) builds the benchmark from the options
recorded in run.json, so `--resume` can rebuild any run from its directory alone, and says
how its runs are shown. Nothing else in visioneval names a benchmark."""

from __future__ import annotations

import importlib
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
    module, _, attribute = target.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load benchmark {name!r}: {exc}") from None
    if isinstance(found, type):
        found = found()
    if not isinstance(found, BenchmarkDefinition):
        raise ValueError(f"{name!r} is not a BenchmarkDefinition (it is {type(found).__name__})")
    return found


def build(name: str, options: dict[str, Any]) -> Benchmark:
    return definition(name).build(options)
