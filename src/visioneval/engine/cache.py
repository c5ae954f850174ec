"""SQLite response cache: an identical request to the same model is answered from disk, so a
re-run sends nothing and costs nothing. Only successful responses are stored; errors are
always retried.

"The same model" is the backend's `identity()`: the model name plus what the server says it
serves (a checkpoint path, a digest, a dated model id; see `backends/served.py`), or the
server's URL when it says nothing. Each entry also keeps where it came from (the run
directory that wrote it, the model and that identity), so a run can say which run its cached
answers came from and `visioneval cache` can list, show and clear them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from visioneval.backends import reasoning
from visioneval.core.records import Request, Response, stable_hash
from visioneval.io.disk import free_space

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""
# Where an entry came from; entries written before these columns existed have NULLs.
PROVENANCE_COLUMNS = (("run", "TEXT"), ("model", "TEXT"), ("identity", "TEXT"))

KEYS_IN_MEMORY = 2_000_000  # ~200 MB of key strings at most


def cache_key(identity: dict[str, Any], request: Request) -> str:
    return stable_hash({"identity": identity, "request": request.fingerprint()})


def identity_text(identity: dict[str, Any]) -> str:
    """An identity as stored beside its entries (canonical JSON: equal identities, equal
    text)."""
    return orjson.dumps(identity, option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True, slots=True)
class Origin:
    """What a new entry records about where it came from: the run directory that asked and
    the model identity that answered."""

    run: str
    model: str
    identity: str

    @classmethod
    def of(cls, run: Path, identity: dict[str, Any]) -> Origin:
        return cls(str(run.resolve()), str(identity.get("model", "")), identity_text(identity))


class ResponseCache:
    def __init__(self, path: Path, batch: int = 64, max_delay_s: float = 5.0):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.execute(SCHEMA)
            _add_provenance(self._db)
            self._known = self._load_keys()
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"cannot open the response cache {path}: {exc}"
                             f"{_advice(exc, path)}") from None
        self.path = path
        self.batch = batch
        self.max_delay_s = max_delay_s
        self._flushed = time.time()
        self._pending: dict[str, tuple[str, float, Origin]] = {}
        self._broken = False
        self._said_unreadable = False

    def _load_keys(self) -> set[str] | None:
        """The stored keys in memory, so a miss costs no query (a fresh run misses on every
        request); None for a cache so big that we would rather ask SQLite each time."""
        (count,) = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        if count > KEYS_IN_MEMORY:
            return None
        return {key for (key,) in self._db.execute("SELECT key FROM responses")}

    def get(self, key: str) -> Response | None:
        """The stored answer, marked as cached and with the run that stored it."""
        if key in self._pending:
            stored, _, origin = self._pending[key]
            source: str | None = origin.run
        elif self._broken or (self._known is not None and key not in self._known):
            return None
        else:
            try:
                row = self._db.execute("SELECT response, run FROM responses WHERE key = ?",
                                       (key,)).fetchone()
            except sqlite3.Error as exc:
                # A damaged page found only now (the keys read at the start were whole).
                self._switch_off(f"cannot read the response cache {self.path}: {exc}"
                                 f"{_advice(exc, self.path)}")
                return None
            if row is None:
                return None
            stored, source = row
        # A cache hit took no time and no attempt in this run.
        # (An answer stored by a version that kept a reasoning model's thinking in its text
        # is split as a new one would be; one cut off while thinking is asked again.)
        try:
            hit = reasoning.cached(Response.model_validate_json(stored))
        except ValueError:
            self._unreadable_entry()
            return None
        if hit is None:
            return None
        return hit.model_copy(update={"cached": True, "latency_s": 0.0, "attempts": 0,
                                      "cached_from": source or UNRECORDED})

    def put(self, key: str, response: Response, origin: Origin) -> None:
        """Queue a successful response; written in batches (the journal, not the cache, is
        what protects finished work, so a kill may only cost a few cache entries)."""
        if not response.ok or self._broken:
            return
        stored = response.model_copy(update={"cached": False, "attempts": 1,
                                             "cached_from": None})
        now = time.time()
        self._pending[key] = (stored.model_dump_json(), now, origin)
        if self._known is not None:
            self._known.add(key)
        if len(self._pending) >= self.batch or now - self._flushed > self.max_delay_s:
            self.flush()

    def flush(self) -> None:
        """Write queued responses in one transaction. A cache that cannot be written (disk
        full, read-only) is switched off with one line: answers are recorded in the run's
        journal either way, so the run goes on."""
        if self._pending and not self._broken:
            rows = [(k, text, created, o.run, o.model, o.identity)
                    for k, (text, created, o) in self._pending.items()]
            try:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT OR REPLACE INTO responses (key, response, created, run, model, "
                    "identity) VALUES (?, ?, ?, ?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(self._db)
                self._switch_off(f"cannot write the response cache {self.path}: {exc}"
                                 f"{_advice(exc, self.path)}")
        self._pending.clear()
        self._flushed = time.time()

    def _switch_off(self, why: str) -> None:
        """No more reads or writes for this run, said in the one line a cache that cannot be
        opened gets: the answers are in the run's journal, so the run goes on."""
        self._broken = True
        self._known = set()
        log.warning("%s; %s", why, CACHE_OFF)

    def _unreadable_entry(self) -> None:
        """An entry whose stored answer does not read back (damaged in place) is a miss: the
        request is sent again. Said once a run."""
        if not self._said_unreadable:
            self._said_unreadable = True
            log.warning("response cache %s: a stored answer cannot be read (the file is "
                        "damaged); such requests are sent again", self.path)

    def close(self) -> None:
        self.flush()
        self._db.close()


CACHE_OFF = ("caching is off for this run (the answers are recorded in the run directory all "
             "the same)")
UNRECORDED = "(a run before visioneval recorded where cached answers came from)"


class CacheError(Exception):
    """The cache file cannot be opened or read; the message says which and what to do."""


def _add_provenance(db: sqlite3.Connection) -> None:
    """Add the provenance columns to a cache written by an older visioneval."""
    have = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
    for name, kind in PROVENANCE_COLUMNS:
        if name not in have:
            db.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")


def _rollback(db: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):  # no transaction was open
        db.execute("ROLLBACK")


def open_or_none(path: Path | None) -> ResponseCache | None:
    """The run's cache, or None (said in one line) when it cannot be opened: the cache only
    saves requests, so a full or read-only cache disk never stops a run."""
    if path is None:
        return None
    try:
        return ResponseCache(path)
    except CacheError as exc:
        log.warning("%s; %s", exc, CACHE_OFF)
        return None


def _advice(exc: BaseException, path: Path) -> str:
    """What follows the error: for a damaged file, that it is damaged and what to do (it
    cannot be repaired in place); otherwise the free space on its disk (a full disk is the
    usual cause)."""
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return f" (the file is damaged: delete {path.name} to start a new cache)"
    return free_space(path)


def default_cache_path() -> Path:
    """$XDG_CACHE_HOME/visioneval (else ~/.cache/visioneval), the platform's cache place."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visioneval" / "responses.sqlite3"


# Reading a cache for `visioneval cache` (list, show, clear).


@dataclass(frozen=True)
class EntryGroup:
    """The entries one run wrote for one model identity."""

    file: Path
    run: str | None
    model: str | None
    identity: str | None
    entries: int
    first: float
    last: float


def cache_files(folder: Path) -> list[Path]:
    """The cache files in a cache folder: the usual one and each shard's."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("responses*.sqlite3") if p.is_file())


def _open_existing(path: Path) -> sqlite3.Connection:
    """A cache file opened for `visioneval cache`; never creates one."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None)
        db.execute("PRAGMA busy_timeout=10000")
        _add_provenance(db)
    except sqlite3.Error as exc:
        raise CacheError(f"cannot read the response cache {path}: {exc}"
                         f"{_advice(exc, path)}") from None
    return db


def groups(path: Path, *, run: str | None = None, model: str | None = None
           ) -> Iterator[EntryGroup]:
    """The entries of one cache file, counted by (run, model, identity), newest first."""
    where, args = _where(run, model)
    db = _open_existing(path)
    try:
        rows = db.execute(
            "SELECT run, model, identity, COUNT(*), MIN(created), MAX(created) FROM responses"
            f"{where} GROUP BY run, model, identity ORDER BY MAX(created) DESC", args).fetchall()
    except sqlite3.Error as exc:
        raise CacheError(f"cannot read the response cache {path}: {exc}"
                         f"{_advice(exc, path)}") from None
    finally:
        db.close()
    for r_run, r_model, r_identity, n, first, last in rows:
        yield EntryGroup(path, r_run, r_model, r_identity, n, first, last)


def clear(path: Path, *, run: str | None = None, model: str | None = None) -> int:
    """Delete the entries of a run, of a model, or all of them (neither given); how many."""
    where, args = _where(run, model)
    db = _open_existing(path)
    try:
        cursor = db.execute(f"DELETE FROM responses{where}", args)
        removed = cursor.rowcount
        if removed:
            db.execute("VACUUM")
    except sqlite3.Error as exc:
        raise CacheError(f"cannot change the response cache {path}: {exc}"
                         f"{_advice(exc, path)}") from None
    finally:
        db.close()
    return removed


def _where(run: str | None, model: str | None) -> tuple[str, tuple[str, ...]]:
    clauses, args = [], []
    if run is not None:
        clauses.append("run = ?")
        args.append(run)
    if model is not None:
        clauses.append("model = ?")
        args.append(model)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)
