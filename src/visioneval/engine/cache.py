"""SQLite response cache: an identical request (backend, base URL, model, settings, messages)
is answered from disk, so a re-run sends nothing and costs nothing. Only successful
responses are stored; errors are always retried."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from visioneval.records import Request, Response, stable_hash

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(identity: dict[str, Any], request: Request) -> str:
    return stable_hash({"identity": identity, "request": request.fingerprint()})


class ResponseCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(SCHEMA)

    def get(self, key: str) -> Response | None:
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        # A cache hit took no time and no attempt in this run.
        return Response.model_validate_json(row[0]).model_copy(
            update={"cached": True, "latency_s": 0.0, "attempts": 0})

    def put(self, key: str, response: Response) -> None:
        if not response.ok:
            return
        stored = response.model_copy(update={"cached": False, "attempts": 1})
        self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                         (key, stored.model_dump_json(), time.time()))

    def close(self) -> None:
        self._db.close()


def default_cache_path() -> Path:
    """$XDG_CACHE_HOME/visioneval (else ~/.cache/visioneval), the platform's cache place."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visioneval" / "responses.sqlite3"
