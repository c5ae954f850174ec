"""What a `--batch` run keeps about its batches, so that no request is sent twice.

Every batch is written down before it is created: its sample ids go to `batches/<key>.ids`
in the run directory and an entry with status "submitting" to run.json's `batch.batches`;
only then is the provider asked. When the provider's id comes back it is recorded at once
("submitted"). A process killed between the two leaves a "submitting" entry: the next
session asks the provider for a batch carrying that key (`BatchClient.find`) and takes it
over, or, if there is none, marks the entry "lost" and sends its samples again. Once a
batch's answers are in the journal its entry is "collected".
"""

from __future__ import annotations

import datetime as dt
import secrets

import orjson

from visioneval.core.runfiles import BatchEntry, BatchRun
from visioneval.core.store import RunStore, write_atomic

IDS_DIR = "batches"
OPEN = ("submitting", "submitted")


class BatchLedger:
    """run.json's `batch` block and the ids files beside it, for one run directory."""

    def __init__(self, store: RunStore, provider: str, discount: float):
        self.store = store
        info = store.info
        if info.batch is None:
            info.batch = BatchRun(provider=provider, discount=discount)
            store.save_info()
        self.run: BatchRun = info.batch

    def open_entries(self) -> list[BatchEntry]:
        """The batches whose answers are not in the journal yet (oldest first)."""
        return [e for e in self.run.batches if e.status in OPEN]

    @staticmethod
    def new_key() -> str:
        """A batch's key, chosen before its requests are written (they carry it)."""
        return "b" + secrets.token_hex(8)

    def intend(self, key: str, sample_ids: list[str]) -> BatchEntry:
        """Record a batch about to be created: its ids file first, then its entry."""
        folder = self.store.directory / IDS_DIR
        folder.mkdir(exist_ok=True)
        write_atomic(folder / f"{key}.ids", b"".join(orjson.dumps(i) + b"\n" for i in sample_ids))
        entry = BatchEntry(key=key, provider=self.run.provider, submitted_at=_now(),
                           requests=len(sample_ids), status="submitting")
        self.run.batches = [*self.run.batches, entry]  # assigned: written to run.json
        self.store.save_info()
        return entry

    def created(self, entry: BatchEntry, batch_id: str) -> None:
        entry.id = batch_id
        self.settle(entry, "submitted")

    def settle(self, entry: BatchEntry, status: str) -> None:
        entry.status = status
        self.store.save_info()

    def sample_ids(self, entry: BatchEntry) -> list[str]:
        """The ids of the samples `entry` holds (one JSON string a line), in order."""
        path = self.store.directory / IDS_DIR / f"{entry.key}.ids"
        try:
            return [str(orjson.loads(line)) for line in path.read_bytes().splitlines()
                    if line.strip()]
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the sample ids of batch "
                             f"{entry.id or entry.key} ({exc.strerror})") from None
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{path}: not one JSON string per line ({exc})") from None


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def submitted_epoch(entry: BatchEntry) -> float:
    """When `entry` was written down, as a Unix time (0 when the record is unreadable)."""
    try:
        return dt.datetime.fromisoformat(entry.submitted_at).timestamp()
    except ValueError:
        return 0.0
