"""visioneval: measure how well vision-language models see.

From Python: `visioneval.run(...)`, `visioneval.arun(...)` (a coroutine), `visioneval.load(dir)`,
`visioneval.run_request(RunSpec(...))` (see `visioneval.api`); your own benchmark
subclasses `visioneval.BenchmarkDefinition` (docs/adding-a-benchmark.md). Names load on first
use, so `visioneval --help` stays fast."""

import importlib

_API = {"run": "visioneval.api", "arun": "visioneval.api", "load": "visioneval.api",
        "RunResult": "visioneval.api", "run_request": "visioneval.api",
        "arun_request": "visioneval.api",
        "BenchmarkDefinition": "visioneval.core.benchmark",
        "Benchmark": "visioneval.core.benchmark",
        "Sample": "visioneval.core.records", "Record": "visioneval.core.records",
        "SkippedRow": "visioneval.core.records", "user": "visioneval.core.records",
        "Image": "visioneval.io.images", "EngineOptions": "visioneval.core.engine_options",
        "RunSpec": "visioneval.runs.spec"}
__all__ = [*_API, "__version__"]


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    if name == "__version__":
        # keeps `import visioneval` light (package metadata)
        from visioneval.core.version import installed_version

        return installed_version()
    raise AttributeError(name)
