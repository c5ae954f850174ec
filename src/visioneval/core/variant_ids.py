"""How a variant's samples and records are named: id `<id>@<variant>`, group
`<group> [<variant>]`, and the variant and original id in the metadata."""

from __future__ import annotations

from collections.abc import Sequence

from visioneval.core.records import Record

VARIANT = "variant"  # a variant record's metadata: the variant's name
VARIANT_OF = "variant_of"  # ... and the id of the original sample
VARIANT_OF_GROUP = "variant_of_group"  # ... and its group, when the variant names its own


def variant_id(sample_id: str, variant: str) -> str:
    return f"{sample_id}@{variant}"


def variant_group(group: str, variant: str) -> str:
    return f"{group} [{variant}]"


def family_of(record: Record) -> str | None:
    """The variant a record answers, or None for the original family."""
    meta = record.metadata
    found = meta.get(VARIANT) if meta else None
    return found if isinstance(found, str) else None


def as_original(record: Record) -> Record:
    """A variant's record as its benchmark would see the original's: the original's id,
    group and metadata (what its paired rows and chance are computed from)."""
    name = family_of(record)
    if name is None:
        return record
    meta = {k: v for k, v in record.metadata.items()
            if k not in (VARIANT, VARIANT_OF, VARIANT_OF_GROUP)}
    group = record.metadata.get(VARIANT_OF_GROUP)
    return record.model_copy(update={
        "id": str(record.metadata.get(VARIANT_OF, record.id)),
        "group": group if isinstance(group, str) else record.group.removesuffix(f" [{name}]"),
        "metadata": meta})


def original_id(sample_id: str, variants: Sequence[str]) -> str:
    """The original sample's id of a variant's id (`<id>@<variant>`, for one of the run's
    `variants`), from the id alone; any other id as it is."""
    for name in variants:
        if sample_id.endswith(f"@{name}"):
            return sample_id[:-len(name) - 1]
    return sample_id
