"""POPE's labels with known errors: RePOPE's re-annotation (corrections.json), applied to a
question only when the data holds the very question it was written for.

A correction names its item as `<setting>/<question_id>` and its evidence starts with the
image and the question (`COCO_val2014_000000310196, "Is there a skis in the image?": ...`).
The question ids of the current files are not those of the older 2,910-line random file
(90 questions fewer, numbered again), so an id alone could point at another question: the
image and the question must match too (an older copy's "imange" read as "image"), and the
label must be the one corrected. A question
RePOPE leaves out as ambiguous has the corrected label `ambiguous`, and the corrected
metrics leave it out."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from visioneval.harness.corrections import Correction, Corrections

MANIFEST = Path(__file__).with_name("corrections.json")


@dataclass(frozen=True)
class Corrected:
    """A question's corrected label (the original when nothing is corrected) and, when a
    correction names the question but does not fit the data, why it was not applied."""

    label: str
    problem: str | None = None


@cache
def manifest() -> Corrections:
    return Corrections.load(MANIFEST)


@cache
def _by_item() -> dict[str, Correction]:
    return {c.item: c for c in manifest().corrections if c.field == "answer"}


def corrected(item: str, image: str | None, question: str, label: str) -> Corrected:
    """The corrected label of one question of the data (`image` None: not known, as in an
    lmms-eval log read without the data; the question alone is checked)."""
    found = _by_item().get(item)
    if found is None:
        return Corrected(label)
    lead = found.evidence.split(", ", 1)
    if (image is not None and lead[0] != image) or len(lead) < 2 or \
            not lead[1].startswith(f'"{_spelled(question)}"'):
        return Corrected(label, f"a correction of {item} is for another question "
                                f"({found.evidence.split(':')[0]}); not applied")
    applied = manifest().corrected(item, "answer", label)
    if applied == label and found.corrected != label:
        return Corrected(label, f"a correction of {item} expects the label "
                                f"{found.original!r}, the data says {label!r}; not applied")
    return Corrected(applied)


def _spelled(question: str) -> str:
    """The question as RePOPE's files spell it: the POPE files of 2023 wrote "imange" in
    some questions about an object with "an" (fixed in AoiDragon/POPE at edebdda and
    109985c), and a copy made before keeps it."""
    return question.replace(" in the imange?", " in the image?")
