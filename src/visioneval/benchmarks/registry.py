"""Benchmark names -> builders, loaded lazily. A new benchmark is one line here.

A builder takes the options recorded in run.json (a dict) and returns a ready Benchmark, so
`--resume` can rebuild any run from its directory alone."""

from __future__ import annotations

import importlib
from typing import Any

from visioneval.benchmarks.base import Benchmark

BUILDERS = {
    "salbench": "visioneval.benchmarks.salbench.benchmark:build",
    "evaluate": "visioneval.evaluators.evaluate:build",
    "illusionbench": "visioneval.benchmarks.illusionbench.benchmark:build",
}


def build(name: str, options: dict[str, Any]) -> Benchmark:
    if name not in BUILDERS:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(BUILDERS)}")
    module, function = BUILDERS[name].split(":")
    return getattr(importlib.import_module(module), function)(options)
