"""MMVP answers in VLMEvalKit's prediction file (`<model>_MMVP.xlsx|tsv|json`), as
visioneval's own MMVP run records them, scored under every protocol that reads VLMEvalKit's
prompt: VLMEvalKit's (each of MMVP's three protocols sends its own prompt).

A row of VLMEvalKit's MMVP.tsv ([V] image_mcq.py, an `ImageMCQDataset`) holds `index`,
`question`, the options in columns `A` and `B` and `answer`, the label's letter; its
`report_acc_MMVP` pairs rows 2i and 2i + 1 (multiple_choice.py lines 613-622). MMVP's Index
is 1-based: a file whose first index is 0 is read as 0-based. The labels are taken to be the
published ones (docs/mmvp.md), and the corrected ones come from them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.mmvp.benchmark import scoring_only
from visioneval.benchmarks.mmvp.labels import labels
from visioneval.benchmarks.mmvp.lmms_eval import RESCORED
from visioneval.benchmarks.mmvp.options import MmvpOptions
from visioneval.benchmarks.mmvp.patterns import pattern
from visioneval.benchmarks.mmvp.prompts import prompt
from visioneval.benchmarks.mmvp.questions import Question, pair_of
from visioneval.benchmarks.mmvp.spec import GROUP
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"MMVP": "mmvp"}
PROTOCOL = "vlmevalkit"


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.offset: int | None = None  # added to the file's index to give MMVP's Index

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"index_base": None if self.offset is None else 1 - self.offset}}

    def notes(self) -> list[str]:
        return [vlmevalkit.PROMPT_NOTE,
                "only VLMEvalKit's protocol reads VLMEvalKit's prompt: the paper's and "
                "lmms-eval's need answers to their own prompts"]


class MmvpVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's MMVP prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest, bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = MmvpOptions(protocol=PROTOCOL, labels="both")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "VLMEvalKit prediction files (MMVP.tsv's rows: questions, "
                               "options and labels; no images)",
                     "files": {GROUP: [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        seen: set[int] = set()
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield self._item(row, checks, seen)

    def _item(self, row: vlmevalkit.Row, checks: Checks, seen: set[int]) -> Item:
        raw = row.get("index").strip()
        if not raw.isdigit():
            return SkippedRow(GROUP, row.where, f"index {raw!r} is not a whole number")
        if checks.offset is None:
            checks.offset = 1 if int(raw) == 0 else 0
        index = int(raw) + checks.offset
        letter = row.get("answer").strip().lower()
        a, b = row.get("A").strip(), row.get("B").strip()
        if letter not in ("a", "b") or not a or not b:
            return SkippedRow(GROUP, row.where, "no options A and B, or an answer other than "
                                                "A or B")
        if index in seen:
            return SkippedRow(GROUP, row.where, f"Index {index} seen before")
        seen.add(index)
        asked = Question(index, row.get("question"), f"(a) {a} (b) {b}", f"({letter})")
        found, notes = labels(asked, "MMVP/MMVP")
        meta: dict[str, Any] = {
            "item": str(index), "index": index, "pair": pair_of(index),
            "question": asked.question, "options": asked.options, "answer": asked.answer,
            "pattern": pattern(index), "prompt": PROTOCOL, "vlmevalkit": checks.where(row)}
        if notes:
            meta["label_notes"] = notes
        sample = Sample(id=f"{index}/{PROTOCOL}", group=GROUP,
                        messages=(user(prompt(PROTOCOL, asked)),),
                        target={"published": found.published, "lmms_eval": found.lmms_eval,
                                "corrected": found.corrected}, metadata=meta)
        return Answered(sample, row.response())


__all__ = ["MmvpVlmEvalKit"]
