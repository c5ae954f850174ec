"""The fast tier (`uv run pytest -m "not slow"`) stays fast by rule: a test whose call takes
over about a second is marked `@pytest.mark.slow`. This plugin names, at the end of a run,
the unmarked tests that took longer. A warning, never a failure: timings on a shared
machine are noisy. Only the call is timed: a module- or session-scoped fixture is paid once
by whichever test comes first, and marking that one would move the cost to the next.
Loaded by conftest.py; test_fast_tier.py runs it on a small test file."""

from __future__ import annotations

import pytest

LIMIT_S = 1.0


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    over = sorted(((report.duration, report.nodeid)
                   for outcome in ("passed", "failed")
                   for report in terminalreporter.stats.get(outcome, ())
                   if report.when == "call" and report.duration > LIMIT_S
                   and "slow" not in report.keywords), reverse=True)
    if not over:
        return
    terminalreporter.section(f"tests over {LIMIT_S:g} s not marked slow", yellow=True)
    for took, nodeid in over:
        terminalreporter.write_line(f"{took:5.2f} s  {nodeid}", yellow=True)
    terminalreporter.write_line("Mark them @pytest.mark.slow or make them faster "
                                "(a warning only: timings vary on a busy machine).")
