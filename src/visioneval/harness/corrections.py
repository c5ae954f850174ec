"""Labels with known errors, as a versioned manifest per benchmark.

A published benchmark keeps its labels, errors included, because every number ever reported
was scored against them; a harness that corrects them in its own copy (lmms-eval's MMVP)
moves its numbers away from the paper's without saying so. visioneval does neither silently:
a benchmark's `corrections.json` lists each correction with its source and the evidence, and
`--labels original|corrected|both` scores against the published labels, the corrected ones,
or both side by side, so the difference they make is a number in the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from visioneval.io.dataerror import DataError

LabelSet = Literal["original", "corrected", "both"]
LABEL_SETS: tuple[str, ...] = ("original", "corrected")


def label_sets(chosen: LabelSet) -> list[str]:
    """The label sets a run scores: one, or both for `both`."""
    return list(LABEL_SETS) if chosen == "both" else [chosen]


class Correction(BaseModel):
    """One label changed: the item (as the benchmark names it), the field, the published and
    the corrected value, who found it (`source`: a paper, a thread) and what shows it
    (`evidence`: what the image shows, who checked, who disagrees)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: str
    field: str
    original: str
    corrected: str
    source: str
    evidence: str


class Corrections(BaseModel):
    """A benchmark's manifest: its version (a date; runs record it) and the corrections; an
    empty list says no error is known, and `searched` says where visioneval looked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    version: str
    searched: str = ""
    corrections: list[Correction] = []

    @classmethod
    def load(cls, path: Path) -> Corrections:
        """The manifest at `path`; a missing or malformed file is one DataError naming it
        and what is wrong."""
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise DataError(f"{path}: cannot read the label corrections "
                            f"({exc.strerror or exc})") from None
        try:
            made = cls.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the file"
            raise DataError(f"{path}: {where}: {first['msg']}") from None
        seen: set[tuple[str, str]] = set()
        for c in made.corrections:
            if (c.item, c.field) in seen:
                raise DataError(f"{path}: item {c.item} field {c.field} is corrected twice")
            seen.add((c.item, c.field))
        return made

    def corrected(self, item: str, field: str, value: str) -> str:
        """The corrected value of `field` for `item`, or `value` when it is not corrected. A
        correction whose `original` is not the value found is not applied (the data is not
        the copy the correction was written for), so a label is never changed blindly."""
        for c in self.corrections:
            if c.item == item and c.field == field and c.original == value:
                return c.corrected
        return value

    def mismatched(self, item: str, field: str, value: str) -> Correction | None:
        """The correction of `item`'s `field` when the data holds neither its original nor
        its corrected value (a different copy of the dataset): worth one line."""
        for c in self.corrections:
            if c.item == item and c.field == field and value not in (c.original, c.corrected):
                return c
        return None


def effect_block(manifest: Corrections, protocols: Mapping[str, Mapping[str, Any]],
                 changed: Mapping[str, int], label_sets: Sequence[str],
                 keys: Sequence[str]) -> dict[str, Any]:
    """metrics.json's `corrections`: the manifest's version and items and, when both label
    sets were scored, per protocol the answers whose verdict a correction changed and what
    it moves each of `keys` by (corrected minus original; a key either set lacks is left
    out). `protocols`: protocol -> label set -> its metrics."""
    block: dict[str, Any] = {"version": manifest.version,
                             "items": [c.item for c in manifest.corrections]}
    if "original" in label_sets and "corrected" in label_sets:
        effect = {}
        for protocol, blocks in protocols.items():
            before, after = blocks["original"], blocks["corrected"]
            cell: dict[str, Any] = {"changed": changed.get(protocol, 0)}
            for key in keys:
                if key in before and key in after:
                    cell[key] = after[key] - before[key]
            effect[protocol] = cell
        block["effect"] = effect
    return block
