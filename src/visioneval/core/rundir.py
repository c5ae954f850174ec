"""A finished (or interrupted) run directory, read back for reporting."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from visioneval.core import registry
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.datacheck import data_change
from visioneval.core.epoch_ids import epoch_of
from visioneval.core.records import Record
from visioneval.core.runfiles import RunInfo
from visioneval.core.store import RunStore
from visioneval.core.variant_ids import family_of


@dataclass
class OpenedRun:
    """A run directory read back: run.json and metrics.json in memory, the journal streamed
    on demand (one record per sample, the last written) so a big run is never held whole."""

    directory: Path
    info: RunInfo
    metrics: dict[str, Any]
    only: frozenset[str] | None = None
    """The sample ids this view is narrowed to (compare --common-only); None: all."""
    named: registry.Named = None
    """The definition the user named for this run (`--definition`), which `shown` trusts."""
    check_data: bool = True
    """Whether `data_change` compares the run's data with the data now (off for the report
    a command writes as it ends: it has just read that data)."""

    def iter_records(self, variants: bool = False, epochs: bool = False
                     ) -> Iterator[Record]:
        """The run's records, one per sample; those of samples that are not in the run's
        data (run.json's `not_in_data`) are left out, as the metrics leave them out, and
        so are those of request variants (`--variant`) unless `variants`, and the repeated
        answers (`--epochs`) unless `epochs`: a benchmark's tables read the first answers
        to the samples as stored (and the variants it reads itself)."""
        records = self._store.iter_latest()
        if self.info.epochs and not epochs:
            records = (r for r in records if epoch_of(r) == 1)
        if self.info.variants and not variants:
            read = {v.name for v in self.info.variants if v.read_by_benchmark}
            records = (r for r in records if family_of(r) is None or family_of(r) in read)
        outside = self.info.not_in_data
        if outside:
            excluded = frozenset(outside)
            records = (r for r in records if r.id not in excluded)
        if self.only is None:
            return records
        only = self.only
        return (r for r in records if r.id in only)

    @cached_property
    def _store(self) -> RunStore:
        """The one store this view reads the journal through (its warnings said once)."""
        return RunStore(self.directory, self.info)

    @property
    def has_records(self) -> bool:
        """Whether any sample was recorded (run.json's count; the journal if it has none)."""
        counts = self.info.counts
        if counts is not None and "records" in counts.model_fields_set:
            return counts.records > 0
        return next(self.iter_records(variants=True, epochs=True), None) is not None

    @property
    def benchmark(self) -> str:
        return self.info.benchmark

    @cached_property
    def _shown(self) -> tuple[BenchmarkDefinition, str | None]:
        return shown_definition(self.info, self.named, self.directory)

    @property
    def shown(self) -> BenchmarkDefinition:
        """The definition the run is shown with (`shown_definition`)."""
        return self._shown[0]

    @property
    def untrusted(self) -> str | None:
        """Why the run is shown with the generic definition (one line), or None."""
        return self._shown[1]

    @cached_property
    def data_change(self) -> str | None:
        """One line when the run's data changed since it ran (`datacheck`), else None; a
        run shown without its definition has no thumbnails and is not checked."""
        if not self.check_data or self.untrusted is not None:
            return None

        return data_change(self.info, self.shown)

    @property
    def model(self) -> str:
        return self.info.backend.model

    @property
    def title(self) -> str:
        shots = self.info.options.get("shots")
        extra = f", {shots}-shot" if shots is not None else ""
        return f"{self.benchmark}: {self.model}{extra}"


def load(directory: Path, named: registry.Named = None, check_data: bool = True) -> OpenedRun:
    """A run directory read back; `named`: the definition the user named for it;
    `check_data`: see `OpenedRun.check_data`."""
    store = RunStore.open(directory)
    # metrics.json as the run's visioneval wrote it (a JSON object; its benchmark's model
    # checked it when it was written, and an earlier version's may have another shape)
    return OpenedRun(directory, store.info, store.read_metrics(), named=named,
                   check_data=check_data)


def just_made(directory: Path, named: registry.Named = None) -> OpenedRun:
    """A run this process has just made, resumed, merged or re-scored, read back for its
    closing tables and report: with the definition it used (`named`, else the one run.json
    records if this process has already imported it, `registry.imported_here`: it has just
    run that code), else by the trust rule; not checked against its data (just read)."""
    if named is None:
        named = registry.imported_here(RunStore.open(directory).info)
    return load(directory, named, check_data=False)


def shown_definition(info: RunInfo, named: registry.Named = None,
                     directory: Path | None = None) -> tuple[BenchmarkDefinition, str | None]:
    """(the definition a run is read with, None) by `registry.for_run`'s trust rule; for a
    run of a benchmark that is not visioneval's and whose definition nobody named, (the
    generic definition: counts and the sample browser, no tables, the one line saying why
    and how to trust it)."""
    try:
        return registry.for_run(info, named, directory), None
    except registry.UntrustedRun as exc:
        return BenchmarkDefinition(), str(exc)


def prompt_text(record: Record) -> str:
    """The prompt's text parts, images shown as [image N]."""
    out, n = [], 0
    for message in record.prompt:
        for part in message.get("parts", []):
            if isinstance(part, str):
                out.append(part if message.get("role", "user") == "user"
                           else f"[{message['role']}] {part}")
            else:
                n += 1
                out.append(f"[image {n}]")
    return "\n".join(out)


def image_hashes(record: Record) -> list[str]:
    """The sha256 of every image in the prompt, in order (the query image is last)."""
    return [part["image"]["sha256"] for message in record.prompt
            for part in message.get("parts", []) if isinstance(part, dict) and "image" in part]


def load_all(items: Sequence[Path | OpenedRun],
             definition: registry.Named = None) -> list[OpenedRun]:
    """Run directories read back (an OpenedRun is taken as it is); `definition`: the one the
    user named for them (`--definition`), else each is read by the trust rule
    (`registry.for_run`)."""
    return [item if isinstance(item, OpenedRun) else load(item, definition) for item in items]
