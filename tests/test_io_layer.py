"""`visioneval.io` is the layer the benchmarks read data through: importing every module of
it loads nothing of the benchmarks, engine, report or commands (checked in a fresh process,
so no other test's imports hide a dependency)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import visioneval.io

UPPER = ("visioneval.benchmarks", "visioneval.engine", "visioneval.report",
         "visioneval.commands", "visioneval.cli", "visioneval.runs.session")


def test_io_imports_no_upper_layer():
    modules = [f"visioneval.io.{m.name}" for m in pkgutil.iter_modules(visioneval.io.__path__)]
    assert {"visioneval.io.parquet", "visioneval.io.pagestream", "visioneval.io.images"} <= \
        set(modules)
    script = ("import importlib, sys\n"
              f"for name in {modules!r}:\n"
              "    importlib.import_module(name)\n"
              f"print('\\n'.join(sorted(m for m in sys.modules if m.startswith({UPPER!r}))))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == []
