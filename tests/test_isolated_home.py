"""The tests never write into the user's own cache (isolated_home.py): HOME and the XDG
folders are the session's own before any fixture runs, module-scoped ones included, and a
session that touched the real cache anyway fails, naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from visioneval.engine.cache import default_cache_path

pytest_plugins = ("pytester",)


@pytest.fixture(scope="module")
def cache_seen_by_a_module_fixture() -> Path:
    """Where the answer cache is for a module-scoped fixture, which runs before any
    function-scoped one."""
    return default_cache_path().parent


def test_a_module_fixture_sees_the_session_home_not_the_users(cache_seen_by_a_module_fixture):
    home = Path(os.environ["HOME"])
    assert home.name.startswith("visioneval-test-home-")
    assert Path.home() == home
    # The function-scoped fixture moves it further, into the test's own folder; the
    # module-scoped one saw the session's: both inside the session's home.
    assert cache_seen_by_a_module_fixture.is_relative_to(home)
    assert default_cache_path().parent != cache_seen_by_a_module_fixture


LEAKY = """
import os
from pathlib import Path

from visioneval.engine.cache import default_cache_path


def test_uses_the_cache():
    assert not default_cache_path().parent.is_relative_to(Path(os.environ["USERS_CACHE"]).parent)


def test_writes_where_the_user_keeps_answers():
    if os.environ.get("LEAK") == "1":  # as a path captured before the session began
        (Path(os.environ["USERS_CACHE"]) / "visioneval" / "responses.sqlite3").write_text("x")
"""


@pytest.mark.slow
@pytest.mark.parametrize("leak", [False, True])
def test_a_session_that_writes_into_the_users_cache_fails(pytester, tmp_path, monkeypatch,
                                                         leak):
    users = tmp_path / "users-cache"
    (users / "visioneval").mkdir(parents=True)
    (users / "visioneval" / "kept.txt").write_text("the user's own")
    monkeypatch.setenv("XDG_CACHE_HOME", str(users))  # the child's "real" cache
    monkeypatch.setenv("USERS_CACHE", str(users))
    monkeypatch.setenv("LEAK", "1" if leak else "0")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # finds isolated_home
    pytester.makepyfile(test_leaky=LEAKY)
    result = pytester.runpytest_subprocess("-p", "isolated_home")
    result.assert_outcomes(passed=2)
    if leak:
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(["*the user's cache was touched*",
                                     f"*the tests wrote into the user's cache {users}*",
                                     "*  responses.sqlite3"])
    else:
        assert result.ret == pytest.ExitCode.OK
        assert "cache was touched" not in result.stdout.str()
    assert (users / "visioneval" / "kept.txt").read_text() == "the user's own"
