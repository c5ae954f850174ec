"""How repeated answers (`--epochs K`) are named: the first answer keeps the sample's id, so
a run of one epoch and the first epoch of a longer one are the same samples (and share their
cache entries); answer k of K is `<id>@epoch<k>`, with the epoch and the first answer's id in
its metadata."""

from __future__ import annotations

from visioneval.core.records import Record

EXPECTED = "expected_outcome"  # `--score expected`: a record's parsed key, the expected outcome
WHY_NONE = "expected_unavailable"  # ... and why there is none
EXPECTED_KEYS = frozenset((EXPECTED, WHY_NONE))
EPOCH = "epoch"  # a repeated answer's metadata: which answer of the item it is (2, 3, ...)
EPOCH_OF = "epoch_of"  # ... and the id of the item's first answer


def epoch_id(sample_id: str, epoch: int) -> str:
    return sample_id if epoch == 1 else f"{sample_id}@epoch{epoch}"


def epoch_of(record: Record) -> int:
    """Which answer of its item a record is (1 for the first, and for a run of one epoch)."""
    found = record.metadata.get(EPOCH) if record.metadata else None
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 1 else 1


def as_first_answer(record: Record) -> Record:
    """A repeated answer's record as its benchmark would see the first one: the item's id
    and metadata (what its paired rows and chance are computed from)."""
    if epoch_of(record) == 1:
        return record
    meta = {k: v for k, v in record.metadata.items() if k not in (EPOCH, EPOCH_OF)}
    return record.model_copy(update={"id": str(record.metadata.get(EPOCH_OF, record.id)),
                                     "metadata": meta})


def first_answer_id(sample_id: str, epochs: int) -> str:
    """The item's id of an answer's id (`<id>@epoch<k>`, k up to `epochs`), from the id
    alone; any other id as it is."""
    head, sep, tail = sample_id.rpartition("@epoch")
    if sep and tail.isdigit() and 2 <= int(tail) <= epochs:
        return head
    return sample_id
