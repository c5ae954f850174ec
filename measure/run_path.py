"""The path of a run's flags from the command line to the engine: which of visioneval's
modules a call passes the run's settings to (a function called with the flags, the run's
description or its engine, model or stopping settings among its arguments) between the
command's function and the engine's first `Engine.run`, and how often such a call goes back
up a layer (a module calling one on a higher layer of docs/architecture.md's map, the map
tests/test_layers.py holds).

    uv run python measure/run_path.py [--layers tests/test_layers.py]

It runs three commands in this process under a profiler, offline, a few seconds each: a
generated benchmark command (`visioneval salbench --backend builtin --model majority` on a
synthetic dataset), `visioneval evaluate` (one case, a code validator) and `visioneval
layout` (two synthetic CANVAS pairs). For each it prints every call that carries the
settings (caller -> callee, with their layers; `--calls`), then the two figures. Run it on
two checkouts to compare them."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import FrameType

HERE = Path(__file__).resolve().parents[1]


def load_layers(path: Path) -> dict[str, int]:
    spec = importlib.util.spec_from_file_location("layers_map", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {unit: k for k, units in enumerate(module.LAYERS) for unit in units}


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


SETTINGS = {"RunFlags", "RunTarget", "RunSpec", "RunRequest", "ResumeRequest", "ResumeGiven",
            "Continuation", "Resumed", "ShardJob", "PlannedRun", "LayoutArgs", "EngineFlags",
            "EngineOptions", "StoppingFlags", "StoppingRule", "Stopping", "Distribution",
            "OnRay", "BackendSpec", "GenerationSettings", "Continuing"}
"""The types that carry a run's settings, under their names then and now."""


def settings_path(args: list[str]) -> list[tuple[str, str]]:
    """(caller module, callee module) of every call that passes the run's settings, in
    order, until the engine starts its samples."""
    from typer.testing import CliRunner

    from visioneval.cli.app import app

    calls: list[tuple[str, str]] = []
    done = False

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal done
        if done or event != "call":
            return
        callee = str(frame.f_globals.get("__name__", ""))
        if not callee.startswith("visioneval"):
            return
        if callee == "visioneval.engine.runner" and frame.f_code.co_name == "run":
            done = True
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        carried = any(type(frame.f_locals.get(n)).__name__ in SETTINGS for n in names)
        caller = frame.f_back
        while caller is not None and not str(caller.f_globals.get("__name__", "")
                                             ).startswith("visioneval"):
            caller = caller.f_back
        if carried and caller is not None:
            source = str(caller.f_globals["__name__"])
            if source != callee:
                calls.append((source, callee))

    sys.setprofile(profile)
    try:
        result = CliRunner().invoke(app, args, catch_exceptions=False)
    finally:
        sys.setprofile(None)
    if result.exit_code != 0:
        raise SystemExit(f"the run failed ({result.exit_code}): {result.output[-400:]}")
    return calls


def commands(folder: Path) -> dict[str, list[str]]:
    """The three commands measured, on data made in `folder`."""
    from typer.testing import CliRunner

    from visioneval.benchmarks.salbench.synth import write_synthetic
    from visioneval.cli.app import app

    write_synthetic(folder / "data", 4, seed=0)
    made = CliRunner().invoke(app, ["data", "synth-layout", "--out", str(folder / "canvas"),
                                    "--n", "2", "--boxes", "3"])
    assert made.exit_code == 0, made.output
    (folder / "shelf.png").write_bytes((HERE / "examples" / "evaluators" / "shelf.png"
                                        ).read_bytes())
    (folder / "cases.yaml").write_text(
        "cases:\n  - id: shelf-count\n    input: How many?\n    images: [shelf.png]\n"
        "    output: I count 5 bottles and 3 cans.\n    expected_output: 5 bottles, 3 cans\n"
        "    evaluators:\n      - validator: count\n")
    quiet = ["--no-report", "--no-progress", "--no-cache"]
    return {
        "salbench": ["salbench", "--backend", "builtin", "--model", "majority", "--data-dir",
                     str(folder / "data"), "--configs", "P3", "--out",
                     str(folder / "salbench"), *quiet],
        "evaluate": ["evaluate", str(folder / "cases.yaml"), "--out",
                     str(folder / "evaluate"), *quiet],
        "layout": ["layout", "--base-dir", str(folder / "canvas"), "--embedder", "bow",
                   "--workers", "1", "--out", str(folder / "layout"), *quiet],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=Path, default=HERE / "tests" / "test_layers.py")
    parser.add_argument("--calls", action="store_true", help="print every call")
    given = parser.parse_args()
    layers = load_layers(given.layers)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_CACHE_HOME"] = folder  # never the user's cache
        for name, args in commands(Path(folder)).items():
            calls = settings_path(args)
            up = 0
            modules = set()
            for source, callee in calls:
                a, b = layers.get(unit_of(source)), layers.get(unit_of(callee))
                modules |= {source, callee}
                step = a is not None and b is not None and b > a
                up += step
                if given.calls:
                    print(f"{a!s:>3} {source} -> {b!s:>3} {callee}" + ("  <- up" if step else ""))
            print(f"{name}: modules passed {len(modules)}, calls back up a layer {up}")


if __name__ == "__main__":
    main()
