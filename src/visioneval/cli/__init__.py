"""The `visioneval` command: options in, calls out. Each command module registers itself on
the app; heavy modules load inside the commands, so `visioneval --help` stays fast."""

from visioneval.cli import (  # noqa: F401 - each module registers its commands
    benchmarks,
    cache,
    data,
    distributed,
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
    app()
