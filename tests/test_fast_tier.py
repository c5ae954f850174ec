"""The end of a run names the tests over a second that are not marked slow (fast_tier.py),
as a warning: the run still passes, and a test marked slow is never named."""

from __future__ import annotations

import pytest

pytest_plugins = ("pytester",)


@pytest.mark.slow
def test_a_long_unmarked_test_is_named_and_a_marked_one_is_not(pytester):
    pytester.makepyfile(test_timed="""
        import time

        import pytest


        def test_unmarked_sleeper():
            time.sleep(1.2)


        @pytest.mark.slow
        def test_marked_sleeper():
            time.sleep(1.2)


        def test_quick():
            pass
        """)
    result = pytester.runpytest("-p", "fast_tier")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK  # a warning, not a failure
    out = result.stdout.str()
    summary = out[out.index("tests over 1 s not marked slow"):]
    result.stdout.fnmatch_lines(["*= tests over 1 s not marked slow =*",
                                 "*.* s  test_timed.py::test_unmarked_sleeper",
                                 "Mark them @pytest.mark.slow or make them faster*"])
    assert "test_marked_sleeper" not in summary and "test_quick" not in summary


def test_a_run_of_quick_tests_has_no_such_section(pytester):
    pytester.makepyfile(test_quick="def test_quick():\n    pass\n")
    result = pytester.runpytest("-p", "fast_tier")
    result.assert_outcomes(passed=1)
    assert "not marked slow" not in result.stdout.str()
