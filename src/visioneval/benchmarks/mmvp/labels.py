"""The label sets MMVP is scored against.

- published: `Correct Answer` of MMVP/MMVP's Questions.csv, what the paper scored against and
  what VLMEvalKit's MMVP.tsv is taken to hold (its content is not published beside its
  md5; docs/mmvp.md);
- lmms-eval's: its copy lmms-lab-eval/MMVP, with Index 99, 100, 279 and 280 changed
  (`spec.LMMS_EVAL_CHANGES`, from lmms-eval's README);
- corrected: the published labels with visioneval's manifest (`corrections.json`) applied.

Either copy of the data gives all three: read from MMVP/MMVP, lmms-eval's labels are the
published ones with its four changes; read from lmms-eval's copy, the published ones are its
labels with those changes undone. A change is applied only where the data holds the value
it was written for; elsewhere the label stays as the data has it and the mismatch is one
line in the run's notes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from visioneval.benchmarks.mmvp.options import Layout
from visioneval.benchmarks.mmvp.questions import Question, label_letter
from visioneval.benchmarks.mmvp.spec import LMMS_EVAL_CHANGES
from visioneval.harness.corrections import Corrections

MANIFEST = Path(__file__).with_name("corrections.json")
FIELD = "Correct Answer"


@cache
def manifest() -> Corrections:
    return Corrections.load(MANIFEST)


@dataclass(frozen=True)
class Labels:
    """One question's label ("a" or "b") in each label set."""

    published: str
    lmms_eval: str
    corrected: str

    def of(self, protocol: str, label_set: str) -> str:
        """The label `protocol` scores against under `label_set` ("original": each
        protocol's own: lmms-eval's copy for lmms-eval, the published for the others)."""
        if label_set == "corrected":
            return self.corrected
        return self.lmms_eval if protocol == "lmms-eval" else self.published


def labels(q: Question, layout: Layout, corrections: Corrections | None = None
           ) -> tuple[Labels, list[str]]:
    """The question's labels and the lines worth saying (a copy that holds neither the
    published nor lmms-eval's label where lmms-eval changed one)."""
    stored = q.answer.strip().lower()
    notes: list[str] = []
    published = lmms = stored
    change = LMMS_EVAL_CHANGES.get(q.index)
    if change is not None:
        before, after = change
        if layout == "MMVP/MMVP" and stored == before:
            lmms = after
        elif layout == "lmms-lab-eval/MMVP" and stored == after:
            published = before
        else:
            notes.append(f"Index {q.index}: the data holds {q.answer.strip()}, where "
                         f"lmms-eval's copy changes {before} to {after}; its label is kept "
                         "for every label set")
    found = corrections or manifest()
    mismatch = found.mismatched(str(q.index), FIELD, published)
    if mismatch is not None:
        notes.append(f"Index {q.index}: the data holds {published}, where the corrections "
                     f"manifest changes {mismatch.original} to {mismatch.corrected}; not "
                     "corrected")
    corrected = found.corrected(str(q.index), FIELD, published)
    return Labels(label_letter(published), label_letter(lmms), label_letter(corrected)), notes
