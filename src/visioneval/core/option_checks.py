"""Checks that options of several benchmarks share."""

from __future__ import annotations

from urllib.parse import urlsplit


def refuse_credentials(urls: str | None, what: str = "judge") -> None:
    """A `--<what>-base-url` (one URL, or several separated by commas) that holds a user name
    or password is refused: options are recorded in run.json, and a password there would be
    written down; the key comes from `--<what>-api-key-env` instead."""
    for url in (urls or "").split(","):
        parts = urlsplit(url.strip())
        if parts.username or parts.password:
            raise ValueError(f"--{what}-base-url holds credentials; give the key with "
                             f"--{what}-api-key-env instead")
