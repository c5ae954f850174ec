"""BlindTest answers logged by lmms-eval (`--log_samples`), as visioneval's own run records
them, scored by the protocol that reads lmms-eval's prompt: lmms-eval's (the paper's and
VLMEvalKit's read answers to their own prompts, which lmms-eval does not send).

lmms-eval's tasks ([L] lmms_eval/tasks/vlmsareblind/): `vlmsareblind` (every row of
XAI/vlmsareblind, split valid) and `vlmsareblind_lite` (the first 100 rows of each task,
utils.py lines 115-130), greedy, max_new_tokens 32. `process_results` logs `accuracy` (0 or
1) and `accuracy_by_task` = {task, is_correct} (utils.py lines 78-93); the line's `target` is
the row's groundtruth (vlmsareblind.yaml line 7) and `input` the prompt with its suffix. So a
log needs no data: the task comes from `accuracy_by_task`, the label from `target`, the
item from `doc_id` (the row). The metadata (line thickness, distance, ...) is not logged, so
per-parameter accuracy needs a visioneval run. lmms-eval's own `is_correct` is checked
against the same rule here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.blindtest import protocols
from visioneval.benchmarks.blindtest.benchmark import scoring_only
from visioneval.benchmarks.blindtest.options import BlindTestOptions
from visioneval.benchmarks.blindtest.spec import LMMS, LMMS_MAX_TOKENS, LMMS_SUFFIX, SPLIT, TASKS
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io import parquet
from visioneval.io.lines import BadLines

TASK_NAMES = {"vlmsareblind": "vlmsareblind", "vlmsareblind_lite": "vlmsareblind_lite"}
RESCORED = "visioneval.benchmarks.blindtest.definition:RESCORED"
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": LMMS_MAX_TOKENS, "seed": None}
BY_LOWER = {t.lower(): t for t in TASKS}


class Checks(lmms_eval.Checks):
    def as_dict(self) -> dict[str, Any]:
        return {"checks": {
            "lmms_eval_score": {"compared": self.compared, "differ": self.differ},
            "prompts_not_default": self.other_prompts,
            "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        out = [self.agreement("is_correct", "lmms-eval's rule here")]
        out += self.counted(
            (self.differ, "answers score differently than lmms-eval logged: the log may "
                          "not be of lmms-eval's vlmsareblind task as visioneval knows it"),
            (self.other_prompts, "prompts do not end with lmms-eval's \"Answer only in the "
                                 "required format.\""))
        out.append(lmms_eval.PROMPT_NOTE)
        return out


class BlindTestLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's vlmsareblind samples files."""

    task_names = TASK_NAMES

    def read(self, logs: Sequence[LogFile], request: RescoreRequest, bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        options = BlindTestOptions(protocol="lmms-eval", labels="original")
        checks = Checks()
        paths = [f.path for f in logs]
        root = paths[0].parent
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "lmms-eval samples logs (XAI/vlmsareblind); tasks and labels "
                               "from the logged results and targets",
                     "fingerprint": parquet.fingerprint(paths, root) if all(
                         p.is_relative_to(root) for p in paths) else "",
                     "files": {SPLIT: [p.name for p in paths]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        seen: set[int] = set()
        for log_file in logs:
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(logged, checks, seen)

    def _item(self, logged: lmms_eval.Logged, checks: Checks, seen: set[int]) -> Item:
        where = f"doc_id {logged.doc_id} ({logged.where})"
        result = logged.metric("accuracy_by_task")
        result = result if isinstance(result, dict) else {}
        task = BY_LOWER.get(str(result.get("task") or "").strip().lower())
        label = (logged.target or "").strip()
        if task is None:
            return SkippedRow(SPLIT, where, f"no BlindTest task in accuracy_by_task "
                                            f"({result.get('task')!r})")
        if not label:
            return SkippedRow(task, where, "no target (the row's groundtruth) in the line")
        if logged.doc_id in seen:
            return SkippedRow(task, where, f"doc_id {logged.doc_id} logged twice")
        seen.add(logged.doc_id)
        text = logged.prompt or ""
        checks.other_prompts += not text.endswith(LMMS_SUFFIX)
        asked = text[:-len(LMMS_SUFFIX)] if text.endswith(LMMS_SUFFIX) else text
        extra = checks.where(logged)
        response = logged.response()
        logged_correct = result.get("is_correct")
        if isinstance(logged_correct, bool) and logged.filtered is not None and response.ok:
            extra["is_correct"] = logged_correct
            checks.compared += 1
            mine = protocols.correct(LMMS, task, protocols.lmms_reading(task, logged.filtered),
                                     label)
            checks.differ += mine != logged_correct
        checks.keep_filtered(logged, extra)
        item = f"{SPLIT}/{logged.doc_id}"
        meta: dict[str, Any] = {"item": item, "task": task, "row": logged.doc_id,
                                "prompt": asked, "parameters": {}, "family": LMMS,
                                "lmms_eval": extra}
        sample = Sample(id=f"{item}/{LMMS}", group=task,
                        messages=(user(text),) if logged.prompt is not None else (),
                        target={"groundtruth": label, "corrected": label}, metadata=meta)
        return Answered(sample, response)


