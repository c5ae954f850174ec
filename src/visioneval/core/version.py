"""The installed visioneval's version, as run.json and the Ray workers' check record it."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version


@functools.cache
def installed_version() -> str:
    """Read on first use: importlib.metadata costs ~80 ms, too much for `--help`."""
    try:
        return version("visioneval")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
