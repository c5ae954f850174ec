"""The test session never touches the user's home: before any fixture or test module runs,
HOME and the XDG folders point into one temporary folder for the whole session, so no test
(whatever its fixtures' scope) writes answers into the user's `~/.cache/visioneval` or
reads their settings. At the end, the user's real visioneval cache is compared with what it
held at the start; a change fails the session, naming what appeared.

Loaded first by conftest.py (`pytest_plugins`); test_isolated_home.py runs it on a small
test file that writes into a (fake) real cache."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Variables pointing at the user's own folders; each is moved into the session's folder.
MOVED = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
         "HF_HOME", "MPLCONFIGDIR")


def real_cache() -> Path:
    """The visioneval cache a user's own run writes to, read before HOME is moved."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visioneval"


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` with its size and modification time (ns)."""
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.rglob("*"):
        try:
            stat = path.lstat()
        except OSError:
            continue
        found[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns)
    return found


class Isolation:
    """The session's own home, and the real cache as it was when the session began."""

    def __init__(self) -> None:
        self.cache = real_cache()
        self.before = snapshot(self.cache)
        self.saved = {name: os.environ.get(name) for name in MOVED}
        self.home = Path(tempfile.mkdtemp(prefix="visioneval-test-home-"))
        os.environ["HOME"] = str(self.home)
        os.environ["XDG_CACHE_HOME"] = str(self.home / ".cache")
        os.environ["XDG_CONFIG_HOME"] = str(self.home / ".config")
        os.environ["XDG_DATA_HOME"] = str(self.home / ".local" / "share")
        os.environ["XDG_STATE_HOME"] = str(self.home / ".local" / "state")
        os.environ["HF_HOME"] = str(self.home / ".cache" / "huggingface")
        os.environ["MPLCONFIGDIR"] = str(self.home / ".config" / "matplotlib")

    def changes(self) -> list[str]:
        """What differs in the real cache since the session began (at most 10 named)."""
        after = snapshot(self.cache)
        changed = sorted(name for name, seen in after.items() if self.before.get(name) != seen)
        return changed[:10] + ([f"... and {len(changed) - 10} more"] if len(changed) > 10 else [])

    def restore(self) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.home, ignore_errors=True)


ISOLATION = pytest.StashKey[Isolation]()


def pytest_configure(config: pytest.Config) -> None:
    """Runs before collection: no test module, fixture or plugin hook after it sees the
    user's home."""
    config.stash[ISOLATION] = Isolation()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    isolation = session.config.stash.get(ISOLATION, None)
    if isolation is None:
        return
    changed = isolation.changes()
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.section("the user's cache was touched", red=True)
            reporter.write_line(f"the tests wrote into the user's cache {isolation.cache}:",
                                red=True)
            for line in changed:
                reporter.write_line(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    isolation = config.stash.get(ISOLATION, None)
    if isolation is not None:
        isolation.restore()
        del config.stash[ISOLATION]
