"""The `visioneval` command: options in, calls out. Each command module registers itself on
the app; heavy modules load inside the commands, so `visioneval --help` stays fast."""

import gc

from visioneval.cli import (  # noqa: F401 - each module registers its commands
    benchmarks,
    cache,
    data,
    distributed,
    explain,
    listing,
    power,
    probe,
    reference,
    reports,
    rescore,
    suite,
    tools,
    validators,
)
from visioneval.cli.app import app


def main() -> None:
    try:
        app()
    finally:
        # The command's work is done and written; what is left is the interpreter's exit,
        # whose last garbage collection walks every object of every module loaded (with
        # scipy's, 75-110 ms on this machine). Frozen, they are left to the exit itself:
        # 20 ms. Files are closed by the commands, never by that collection
        # (docs/PERFORMANCE.md).

        gc.freeze()
