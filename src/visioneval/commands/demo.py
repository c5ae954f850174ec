"""`visioneval demo`: offline, end to end, with no server and no download: the demo
benchmark's builtin baseline on a small synthetic set it writes first (the SalBench popout
baseline on synthetic P3 scenes)."""

from __future__ import annotations

from pathlib import Path

from visioneval.commands.common import consoles
from visioneval.commands.flags import RunFlags, RunTarget, generation
from visioneval.commands.perform import run_flags
from visioneval.core import registry
from visioneval.core.capabilities import HasDemo
from visioneval.engine.cache import default_cache_path
from visioneval.terminal import line, print_command


def demo(*, n: int, seed: int, out: Path | None, no_progress: bool, no_report: bool,
         verbose: bool) -> int:
    """The synthetic set written (said before the run), the run, then what to try next
    (said even when the run ended early); the run's exit code."""
    definition = registry.definition(registry.DEMO)
    assert isinstance(definition, HasDemo), f"{registry.DEMO} has no demo"
    said = []

    def benchmark():
        demo = definition.demo(default_cache_path().parent, n, seed)
        line(consoles()[1], demo.before)
        said.append(demo)
        return demo.benchmark

    try:
        return run_flags(RunFlags(backend="builtin", model=definition.demo_model, out=out,
                                  no_cache=True, no_progress=no_progress,
                                  no_report=no_report, verbose=verbose),
                         RunTarget(definition.name, benchmark, lambda: generation(
                             0, definition.max_tokens, definition.max_tokens)))
    finally:
        for shown in said:
            if shown.then:
                print_command(consoles()[0], shown.after, shown.then)
            else:
                line(consoles()[0], shown.after)
