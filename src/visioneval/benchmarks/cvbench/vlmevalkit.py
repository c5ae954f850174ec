"""CV-Bench answers in VLMEvalKit's prediction files (`<model>_CV-Bench-2D.xlsx|tsv|json`
and `<model>_CV-Bench-3D...`), as visioneval's own CV-Bench run records them, scored under
every protocol that sends VLMEvalKit's prompt: VLMEvalKit's alone (it sends the dataset's
`prompt` as it is, [V] image_mcq.py:1207-1223; the paper adds "Answer with the option's
letter ...", lmms-eval its "Note" line).

A row of VLMEvalKit's CV-Bench TSVs (class `CVBench`, image_mcq.py:1185-1300) holds `index`,
`question`, `prompt`, the options in columns `A`, `B`, ... (`build_choices`,
multiple_choice.py:346-351), `answer` (the letter, compared with the inferred one,
multiple_choice.py:434), `split` ("2D" or "3D": `evaluate` picks the 2D report when every row
says 2D, image_mcq.py:1270), `source` (ADE20K, COCO or Omni3D: the 2D Overall is the mean of
the source accuracies, image_mcq.py:1279-1298) and `category` (the task: the 3D report's
columns Depth and Distance, `report_acc`, multiple_choice.py:88-99). A `task` column, when a
file has one, names the task instead. The image is not in the file, so intervals resample
items. VLMEvalKit's `index` is not the Hub's `idx`: the labels are the file's own."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.cvbench import protocols
from visioneval.benchmarks.cvbench.benchmark import scoring_only
from visioneval.benchmarks.cvbench.lmms_eval import RESCORED
from visioneval.benchmarks.cvbench.options import CvBenchOptions
from visioneval.benchmarks.cvbench.spec import SOURCES, TASKS, TYPES
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"CV-Bench-2D": "2D", "CV-Bench-3D": "3D"}
PROTOCOL = "vlmevalkit"
_GOLD = re.compile(r"^\(?([A-Z])\)?$")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.no_task = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"rows_without_task": self.no_task}}

    def notes(self) -> list[str]:
        return [vlmevalkit.PROMPT_NOTE,
                "only VLMEvalKit's protocol sends the dataset prompt alone: the paper's and "
                "lmms-eval's add their own instruction and are not scored",
                *self.counted((self.no_task, "rows name no CV-Bench task (category or task "
                                             "column): left out of the per-task figures"))]


class CvBenchVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's CV-Bench-2D and CV-Bench-3D prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest, bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = CvBenchOptions(protocol=PROTOCOL, labels="original")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "VLMEvalKit prediction files (CV-Bench-2D.tsv and "
                               "CV-Bench-3D.tsv rows: prompts, options, labels, sources; "
                               "no images)",
                     "files": {f.task: [f.path.name] for f in logs}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        seen: set[str] = set()
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield self._item(row, DATASETS[log_file.task], checks, seen)

    def _item(self, row: vlmevalkit.Row, kind: str, checks: Checks, seen: set[str]) -> Item:
        index = row.get("index").strip()
        source = row.get("source").strip() or ("Omni3D" if kind == "3D" else "")
        if source not in SOURCES or TYPES[source] != kind:
            return SkippedRow(kind, row.where, f"source {row.get('source')!r} is not one of "
                              f"CV-Bench-{kind}'s")
        choices: list[str] = []
        for letter in LETTERS:
            text = row.get(letter).strip()
            if not text:
                break
            choices.append(text)
        if len(choices) < 2:
            return SkippedRow(source, row.where, "no options in columns A and B")
        found = _GOLD.match(row.get("answer").strip().upper())
        if found is None or found.group(1) not in protocols.letters(choices):
            return SkippedRow(source, row.where, f"answer {row.get('answer')!r} is not one "
                                                 "of its options")
        text = row.get("prompt")
        if not text.strip():
            return SkippedRow(source, row.where, "no prompt (the text VLMEvalKit sends)")
        key = f"{kind}/{index}"
        if key in seen:
            return SkippedRow(source, row.where, f"index {index} seen before")
        seen.add(key)
        task = next((t for t in (row.get("task").strip(), row.get("category").strip())
                     if t in TASKS), "")
        checks.no_task += not task
        gold = found.group(1)
        meta: dict[str, Any] = {
            "item": key, "idx": index, "source": source, "task": task, "type": kind,
            "choices": choices, "question": row.get("question") or text,
            "protocol": PROTOCOL, "vlmevalkit": checks.where(row)}
        sample = Sample(id=f"{key}/{PROTOCOL}", group=source,
                        target={"original": gold, "corrected": gold},
                        messages=(user(text),), metadata=meta)
        return Answered(sample, row.response())


__all__ = ["CvBenchVlmEvalKit"]
