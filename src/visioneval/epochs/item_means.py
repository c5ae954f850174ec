"""A run's paired rows with its repeated answers folded into each item: the mean of an
item's 0/1 outcomes over its answers (so `visioneval compare` tests item means, clustered as
the benchmark clusters them), other rows from the item's first answer."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from visioneval.core.capabilities import PairsRecords
from visioneval.core.epoch_ids import as_first_answer, epoch_of
from visioneval.core.records import Record
from visioneval.core.variant_ids import family_of
from visioneval.stats.paired import PairedRow


def item_rows(records: Iterable[Record], pairs: PairsRecords
              ) -> Iterator[tuple[str, dict[str, PairedRow]]]:
    """(item id, its rows) for each item of the records' original family. Memory: a few
    numbers per item and metric."""
    sums: dict[str, dict[str, list[float]]] = {}
    firsts: dict[str, dict[str, PairedRow]] = {}
    for record in records:
        if not record.ok or family_of(record) is not None:
            continue
        first = as_first_answer(record)
        rows = pairs.paired_rows(first)
        item = sums.setdefault(first.id, {})
        for key, row in rows.items():
            if row.kind == "correct" and len(row.values) == 1:
                tally = item.setdefault(key, [0.0, 0.0])
                tally[0] += row.values[0]
                tally[1] += 1
        if epoch_of(record) == 1:
            firsts[first.id] = rows
    for item_id, found in sums.items():
        rows = dict(firsts.get(item_id, {}))
        template = rows or {}
        for key, (total, count) in found.items():
            cluster = template[key].cluster if key in template else None
            pooled = template[key].pooled if key in template else False
            rows[key] = PairedRow("correct", (total / count,), cluster, pooled)
        yield item_id, rows
