"""A published dataset's row counts, shipped with its benchmark (`rows.json` in its folder),
so that a dry run without a local copy of the data counts what a run would send without
downloading anything. Each file names the dataset, the revision or observation the counts
come from, and the rows of each part (None: not published in any source we could read)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass(frozen=True)
class PublishedRows:
    """What a run of the published data would read, counted without it. `parts`: the
    configs or subsets the run reads, with their published rows (None: unknown); `limit`:
    --num-samples (the first N rows of each part); `requests_per_row`: requests each row
    makes; `prompt_chars`: a typical request's text (an estimate, `chars_source` says
    where it comes from); `images_per_request`: images each request sends, but those of
    the `text_only` parts, which send none."""

    dataset: str
    revision: str
    parts: Mapping[str, int | None]
    limit: int | None = None
    requests_per_row: int = 1
    images_per_request: int = 1
    prompt_chars: int = 0
    chars_source: str = ""
    notes: tuple[str, ...] = field(default=())
    text_only: tuple[str, ...] = ()

    def rows(self, part: str) -> int | None:
        """The rows the run reads of `part`: its published count capped by --num-samples;
        with an unknown count, --num-samples itself (at most that many), else None."""
        published = self.parts[part]
        if published is None:
            return self.limit
        return published if self.limit is None else min(published, self.limit)

    def unknown(self) -> list[str]:
        """The parts whose rows cannot be counted (unknown and no --num-samples)."""
        return [p for p in self.parts if self.rows(p) is None]

    def bounded(self) -> list[str]:
        """The parts counted as --num-samples rows because their count is not known."""
        return [p for p in self.parts if self.parts[p] is None and self.limit is not None]

    def requests(self) -> int:
        return sum((self.rows(p) or 0) for p in self.parts) * self.requests_per_row

    def images(self) -> int:
        """Images the requests send (none for a text-only part)."""
        return sum((self.rows(p) or 0) for p in self.parts if p not in self.text_only) \
            * self.requests_per_row * self.images_per_request

    def times(self, factor: int) -> PublishedRows:
        """The same with `factor` requests per row (request variants)."""
        return replace(self, requests_per_row=self.requests_per_row * factor)


def read_counts(path: Path, parts: list[str], limit: int | None = None,
                **more: object) -> PublishedRows:
    """The counts of `parts` from a benchmark's rows.json."""
    document = json.loads(path.read_text(encoding="utf-8"))
    known: dict[str, int | None] = document["rows"]
    return PublishedRows(dataset=document["dataset"], revision=document["revision"],
                         parts={p: known.get(p) for p in parts}, limit=limit,
                         prompt_chars=int(document.get("prompt_chars", 0)),
                         chars_source=str(document.get("prompt_chars_source", "")),
                         **more)  # type: ignore[arg-type]
