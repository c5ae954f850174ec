"""SQLite response cache: an identical request (backend, base URL, model, settings, messages)
is answered from disk, so a re-run sends nothing and costs nothing. Only successful
responses are stored; errors are always retried."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from visioneval.backends import reasoning
from visioneval.records import Request, Response, stable_hash

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


KEYS_IN_MEMORY = 2_000_000  # ~200 MB of key strings at most


def cache_key(identity: dict[str, Any], request: Request) -> str:
    return stable_hash({"identity": identity, "request": request.fingerprint()})


class ResponseCache:
    def __init__(self, path: Path, batch: int = 64, max_delay_s: float = 5.0):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.batch = batch
        self.max_delay_s = max_delay_s
        self._flushed = time.time()
        self._pending: dict[str, tuple[str, float]] = {}
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(SCHEMA)
        self._known = self._load_keys()

    def _load_keys(self) -> set[str] | None:
        """The stored keys in memory, so a miss costs no query (a fresh run misses on every
        request); None for a cache so big that we would rather ask SQLite each time."""
        (count,) = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        if count > KEYS_IN_MEMORY:
            return None
        return {key for (key,) in self._db.execute("SELECT key FROM responses")}

    def get(self, key: str) -> Response | None:
        if key in self._pending:
            stored = self._pending[key][0]
        elif self._known is not None and key not in self._known:
            return None
        else:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?",
                                   (key,)).fetchone()
            if row is None:
                return None
            stored = row[0]
        # A cache hit took no time and no attempt in this run.
        hit = reasoning.cached(Response.model_validate_json(stored))
        return hit.model_copy(update={"cached": True, "latency_s": 0.0, "attempts": 0}) \
            if hit is not None else None

    def put(self, key: str, response: Response) -> None:
        """Queue a successful response; written in batches (the journal, not the cache, is
        what protects finished work, so a kill may only cost a few cache entries)."""
        if not response.ok:
            return
        stored = response.model_copy(update={"cached": False, "attempts": 1})
        now = time.time()
        self._pending[key] = (stored.model_dump_json(), now)
        if self._known is not None:
            self._known.add(key)
        if len(self._pending) >= self.batch or now - self._flushed > self.max_delay_s:
            self.flush()

    def flush(self) -> None:
        """Write queued responses in one transaction."""
        if self._pending:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                                 [(k, *v) for k, v in self._pending.items()])
            self._db.execute("COMMIT")
            self._pending.clear()
        self._flushed = time.time()

    def close(self) -> None:
        self.flush()
        self._db.close()


def default_cache_path() -> Path:
    """$XDG_CACHE_HOME/visioneval (else ~/.cache/visioneval), the platform's cache place."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visioneval" / "responses.sqlite3"
