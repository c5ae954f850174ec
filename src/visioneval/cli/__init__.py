"""The `visioneval` command: options in, calls out. Each command module registers itself on
the app; heavy modules load inside the commands, so `visioneval --help` stays fast."""

from visioneval.cli import benchmarks, data, evaluators, reports, tools  # noqa: F401
from visioneval.cli.app import app


def main() -> None:
    app()
