"""CV-Bench answers logged by lmms-eval, as visioneval's own CV-Bench run records them,
scored under the lmms-eval protocol (the only one that sends lmms-eval's prompt).

lmms-eval's tasks `cv_bench`, `cv_bench_2d` and `cv_bench_3d` (`lmms_eval/tasks/cv_bench/`)
log, per sample, the prompt (`input`: the "Note: ..." line, a blank line and the dataset
prompt, utils.py:27-34) and the metric field `cv_bench_acc` (utils.py:41-52): `id` (the
doc's idx), `gt_content` (the gold letter), `pred_parsed` (lmms-eval's letter), `pred`,
`type`, `task`, `source` and `is_correct`. The options are read back from the prompt's
"(A) ..." lines. The logged letter is checked against the same extraction here. No image
is logged, so intervals resample items, not images. max_new_tokens 1024, no temperature
(_default_template_yaml:13-14)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.cvbench import protocols
from visioneval.benchmarks.cvbench.benchmark import scoring_only
from visioneval.benchmarks.cvbench.options import CvBenchOptions
from visioneval.benchmarks.cvbench.spec import SOURCES, TASKS, TYPES
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io.lines import BadLines

TASK_NAMES = {"cv_bench": "cv_bench", "cv_bench_2d": "cv_bench_2d",
              "cv_bench_3d": "cv_bench_3d"}
RESCORED = "visioneval.benchmarks.cvbench.definition:RESCORED"
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": 1024, "seed": None}
LOGGED = "cv_bench_acc"
_OPTION = re.compile(r"^\(([A-Z])\)\s?(.*)$", re.MULTILINE)


def options_in(prompt: str) -> list[str]:
    """The option texts of the prompt's "(A) ..." lines, in letter order from A; [] when
    the letters do not run A, B, C..."""
    found = _OPTION.findall(prompt)
    if [letter for letter, _ in found] != protocols.letters([t for _, t in found]):
        return []
    return [text.strip() for _, text in found]


class Checks(lmms_eval.Checks):
    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"lmms_eval_extraction": {"compared": self.compared,
                                                    "differ": self.differ},
                           "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        return [self.agreement("letter (pred_parsed)", "the same extraction here"),
                *self.counted((self.differ, "answers extract differently than lmms-eval "
                                            "logged: the log may have been changed"))]


class CvBenchLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's cv_bench samples files."""

    task_names = TASK_NAMES

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        options = CvBenchOptions(protocol="lmms-eval", labels="original")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "lmms-eval samples logs; labels: the logged gt_content",
                     "files": {f.task: [f.path.name] for f in logs}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict,
            notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        for log_file in logs:
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(logged, checks)

    def _item(self, logged: lmms_eval.Logged, checks: Checks) -> Item:
        where = f"doc_id {logged.doc_id} ({logged.where})"
        field = logged.metric(LOGGED)
        if not isinstance(field, dict):
            return SkippedRow("cvbench", where, f"no {LOGGED} field (source, task, gold)")
        source, task, gold = field.get("source"), field.get("task"), field.get("gt_content")
        if source not in SOURCES or task not in TASKS:
            return SkippedRow("cvbench", where, f"{LOGGED}: source {source!r} or task "
                              f"{task!r} is not CV-Bench's")
        choices = options_in(logged.prompt or "")
        if not isinstance(gold, str) or gold not in protocols.letters(choices):
            return SkippedRow("cvbench", where, f"{LOGGED}.gt_content {gold!r} is not one "
                              "of the options the logged prompt lists")
        idx = field.get("id", logged.doc_id)
        extra = checks.where(logged)
        parsed = field.get("pred_parsed")
        if isinstance(parsed, str) and logged.filtered is not None:
            checks.compared += 1
            checks.differ += protocols.lmms_eval_letter(logged.filtered) != parsed
            extra["pred_parsed"] = parsed
        checks.keep_filtered(logged, extra)
        meta = {"item": str(idx), "idx": idx, "source": source, "task": task,
                "type": TYPES[source], "choices": choices, "protocol": "lmms-eval",
                "question": (logged.prompt or "").split("\n")[-len(choices) - 1],
                "lmms_eval": extra}
        sample = Sample(id=f"{idx}/lmms-eval", group=str(source),
                        target={"original": gold, "corrected": gold},
                        messages=(user(logged.prompt),) if logged.prompt is not None else (),
                        metadata=meta)
        return Answered(sample, logged.response())


__all__ = ["CvBenchLmmsEval"]
