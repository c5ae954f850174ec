"""BLINK answers in VLMEvalKit's prediction file (`<model>_BLINK.xlsx|tsv|json`), as
visioneval's own BLINK run records them, scored under every protocol that reads VLMEvalKit's
prompt: VLMEvalKit's alone (the paper sends the dataset's `prompt`, with a disclaimer for
three tasks; lmms-eval its "Note" line; VLMEvalKit "Question: ...\\nOptions:\\nA. ...").

A row of VLMEvalKit's BLINK.tsv ([V] image_mcq.py:107 and 188, an `ImageMCQDataset`) holds
`index`, `question`, the options in columns `A`..`D` (empty when the question has fewer,
multiple_choice.py:346-351 `build_choices`), `answer` (the letter), `category` (the task:
`report_acc` gives one column per category, multiple_choice.py:88-99) and an optional
`hint` (image_mcq.py:231-234 puts it before the question). The prompt is rebuilt from the
row as `build_prompt` makes it (image_mcq.py:212-247). VLMEvalKit's `index` is not the Hub's
`idx`, so the labels are the file's own (corrections.json names Hub idx values)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.blink.benchmark import scoring_only
from visioneval.benchmarks.blink.lmms_eval import RESCORED
from visioneval.benchmarks.blink.options import BlinkOptions
from visioneval.benchmarks.blink.prompts import vlmevalkit as vlmevalkit_prompt
from visioneval.benchmarks.blink.questions import LETTERS, Question
from visioneval.benchmarks.blink.spec import TASKS
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"BLINK": "BLINK"}
PROTOCOL = "vlmevalkit"
GROUP = "BLINK"
_SEPARATORS = re.compile(r"[\s_\-]+")


def _key(name: str) -> str:
    return _SEPARATORS.sub("", name).lower()


# A category as VLMEvalKit may spell a task ("Art_Style", "Art Style", "art-style").
_TASK_OF = {_key(t): t for t in TASKS}


def task_of(category: str) -> str | None:
    return _TASK_OF.get(_key(category))


def prompt_of(row: vlmevalkit.Row, q: Question) -> str:
    """`build_prompt`'s text: "Hint: ...\\n" when the row has one, then the question and
    its options (image_mcq.py:231-238)."""
    hint = row.get("hint").strip()
    return (f"Hint: {hint}\n" if hint else "") + vlmevalkit_prompt(q)


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.hinted = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"rows_with_hint": self.hinted}}

    def notes(self) -> list[str]:
        return [vlmevalkit.PROMPT_NOTE,
                "only VLMEvalKit's protocol reads VLMEvalKit's prompt: the paper's and "
                "lmms-eval's need answers to their own prompts and are not scored",
                *self.counted((self.hinted, "rows carry a hint, sent before the question"))]


class BlinkVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's BLINK prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest, bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = BlinkOptions(protocol=PROTOCOL, labels="original")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "VLMEvalKit prediction files (BLINK.tsv's rows: questions, "
                               "options, labels and tasks; no images)",
                     "files": {GROUP: [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        seen: set[str] = set()
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield self._item(row, checks, seen)

    def _item(self, row: vlmevalkit.Row, checks: Checks, seen: set[str]) -> Item:
        index = row.get("index").strip()
        category = row.get("category").strip()
        task = task_of(category)
        if task is None:
            return SkippedRow(GROUP, row.where, f"category {category!r} is not a BLINK task")
        choices = tuple(row.get(letter).strip() for letter in LETTERS)
        count = next((i for i, text in enumerate(choices) if not text), len(choices))
        if count < 2 or any(choices[count:]):
            return SkippedRow(task, row.where, "no options A and B, or a gap among A ... E")
        letter = row.get("answer").strip().strip("()").upper()
        if letter not in LETTERS[:count]:
            return SkippedRow(task, row.where, f"answer {row.get('answer')!r} is not one of "
                                               "its options")
        if index in seen:
            return SkippedRow(task, row.where, f"index {index} seen before")
        seen.add(index)
        q = Question(index, task, row.get("question"), choices[:count], f"({letter})", "")
        checks.hinted += bool(row.get("hint").strip())
        meta: dict[str, Any] = {
            "item": index, "task": task, "question": q.question, "choices": list(q.choices),
            "answer": q.answer, "letters": q.letters, "corrected": q.answer,
            "prompt": PROTOCOL, "vlmevalkit": checks.where(row)}
        sample = Sample(id=f"{index}/{PROTOCOL}", group=task, target=q.answer,
                        messages=(user(prompt_of(row, q)),), metadata=meta)
        return Answered(sample, row.response())


__all__ = ["BlinkVlmEvalKit"]
