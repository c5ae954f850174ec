"""BlindTest answers in VLMEvalKit's prediction file (`<model>_VLMBlind.xlsx|tsv|json`), as
visioneval's own run records them, scored by the protocol that sends VLMEvalKit's prompt:
VLMEvalKit's own, "Question: <question>\\n" ([V] image_mcq.py `build_prompt` line 235; the
rows have no hint and no options). The paper's protocol sends the Hub's prompt alone and
lmms-eval's adds its own suffix: neither asked these answers, so neither scores them.

A row of VLMEvalKit's VLMBlind.tsv ([V] image_mcq.py class `VLMBlind`, lines 2529-2615)
holds `index`, `question`, `task` (the Hub's task label, compared exactly, line 2575) and
`answers` (the label, plural, lines 2581-2608). The image is not in the file. A `metadata`
column (the Hub's JSON), when the file has one, gives the task's parameters and magnitude;
without it there is no accuracy per parameter and no threshold."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.blindtest import magnitude
from visioneval.benchmarks.blindtest.benchmark import (
    metadata_object,
    parameters,
    prompt,
    scoring_only,
)
from visioneval.benchmarks.blindtest.labels import corrected
from visioneval.benchmarks.blindtest.lmms_eval import RESCORED
from visioneval.benchmarks.blindtest.options import BlindTestOptions
from visioneval.benchmarks.blindtest.spec import TASKS, VLMEVALKIT
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.core.rows import Skip
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"VLMBlind": "VLMBlind"}
PART = "VLMBlind"  # items are named by the file's `index`, not the Hub's row


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.with_metadata = 0
        self.rows = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"rows": self.rows, "rows_with_metadata": self.with_metadata}}

    def notes(self) -> list[str]:
        out = [vlmevalkit.PROMPT_NOTE,
               "VLMEvalKit sends \"Question: <question>\": only VLMEvalKit's protocol reads "
               "these answers; the paper's (the question alone) and lmms-eval's (its own "
               "suffix) asked otherwise and are not scored"]
        if self.rows and self.with_metadata < self.rows:
            out.append(f"{self.rows - self.with_metadata} rows have no metadata column: no "
                       "accuracy per parameter and no threshold for them")
        return out


class BlindTestVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's VLMBlind prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = BlindTestOptions(protocol="vlmevalkit", labels="both")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "VLMEvalKit prediction files (VLMBlind.tsv's rows; no images)",
                     "files": {"VLMBlind": [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield self._item(row, checks)

    def _item(self, row: vlmevalkit.Row, checks: Checks) -> Item:
        index = row.get("index").strip()
        task = row.get("task").strip()
        label = row.get("answers").strip()
        question = row.get("question")
        if task not in TASKS:
            return SkippedRow(PART, row.where, f"task {row.get('task')!r} is not a BlindTest "
                              "task label (VLMEvalKit compares them exactly)")
        if not label or not question.strip() or not index:
            return SkippedRow(task, row.where, "no index, question or answers in the row")
        try:
            found = metadata_object(row.get("metadata"))
        except Skip as exc:
            return SkippedRow(task, row.where, str(exc))
        checks.rows += 1
        checks.with_metadata += bool(found)
        item = f"{PART}/{index}"
        meta: dict[str, Any] = {"item": item, "task": task, "row": index, "prompt": question,
                                "parameters": parameters(found), "family": VLMEVALKIT,
                                "vlmevalkit": checks.where(row)}
        level = magnitude.level(task, found)
        if level is not None:
            meta["level"] = level
        sample = Sample(id=f"{item}/{VLMEVALKIT}", group=task,
                        messages=(user(prompt(VLMEVALKIT, question)),),
                        target={"groundtruth": label, "corrected": corrected(item, label)},
                        metadata=meta)
        return Answered(sample, row.response())


__all__ = ["BlindTestVlmEvalKit"]
