"""MMVP answers logged by lmms-eval (`--log_samples`), as visioneval's own MMVP run records
them, scored under every protocol that reads lmms-eval's prompt: lmms-eval's.

lmms-eval's task ([L] lmms_eval/tasks/mmvp/, task name `mmvp`): one request per row of
lmms-lab-eval/MMVP (split `train`), greedy, max_new_tokens 16. Its `process_results` logs,
under both `mmvp_accuracy` and `mmvp_pair_accuracy`, the 0-based `index` (the row's Index
minus 1), `gt` (its label letter), `pred_letter` and `is_correct` (utils.py lines 150-184);
the line's `target` is the label letter and `input` the prompt. So a log needs no data: the
question and options are read back from the prompt, the Index from `index` (else doc_id + 1),
lmms-eval's label from `gt` (else `target`), and the published and corrected labels from it
(lmms-eval's four changes undone, `labels.py`). lmms-eval's own `is_correct` is checked
against the same rule here."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.mmvp import prompts
from visioneval.benchmarks.mmvp.benchmark import scoring_only
from visioneval.benchmarks.mmvp.labels import labels
from visioneval.benchmarks.mmvp.options import MmvpOptions
from visioneval.benchmarks.mmvp.patterns import pattern
from visioneval.benchmarks.mmvp.questions import Question, pair_of
from visioneval.benchmarks.mmvp.readings import lmms_eval as lmms_letter
from visioneval.benchmarks.mmvp.spec import GROUP, LMMS_EVAL_REPO
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io import parquet
from visioneval.io.lines import BadLines

TASKS = {"mmvp": "mmvp"}
RESCORED = "visioneval.benchmarks.mmvp.definition:RESCORED"
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": 16, "seed": None}  # the task's yaml
_PROMPT = re.compile(r"(?P<question>.*)\nA\. (?P<a>[^\n]*)\nB\. (?P<b>[^\n]*?)"
                     r"(?:" + re.escape(prompts.LMMS_POST_PROMPT) + r")?\Z", re.DOTALL)


def question_from(prompt: str | None, index: int, label: str) -> Question | None:
    """The question lmms-eval asked, read back from its prompt (None: not its layout)."""
    match = _PROMPT.fullmatch(prompt or "")
    if match is None:
        return None
    options = f"(a) {match['a']} (b) {match['b']}"
    return Question(index, match["question"], options, f"({label})")


class Checks(lmms_eval.Checks):
    def as_dict(self) -> dict[str, Any]:
        return {"checks": {
            "lmms_eval_score": {"compared": self.compared, "differ": self.differ},
            "prompts_not_verbatim": self.other_prompts,
            "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        out = [self.agreement("is_correct", "lmms-eval's rule here")]
        out += self.counted(
            (self.differ, "answers score differently than lmms-eval logged: the log may "
                          "not be of lmms-eval's mmvp task as visioneval knows it"),
            (self.other_prompts, "prompts are not lmms-eval's mmvp prompt verbatim"))
        out.append(lmms_eval.PROMPT_NOTE)
        return out


class MmvpLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's mmvp samples files."""

    task_names = TASKS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest, bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        options = MmvpOptions(protocol="lmms-eval", labels="both")
        checks = Checks()
        paths = [f.path for f in logs]
        root = paths[0].parent
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": f"lmms-eval samples logs ({LMMS_EVAL_REPO}); questions and "
                               "labels from the logged prompts and targets",
                     "fingerprint": parquet.fingerprint(paths, root) if all(
                         p.is_relative_to(root) for p in paths) else "",
                     "files": {GROUP: [p.name for p in paths]}},
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
        result = logged.metric("mmvp_accuracy")
        result = result if isinstance(result, dict) else {}
        index0 = result.get("index")
        index = index0 + 1 if isinstance(index0, int) and not isinstance(index0, bool) \
            else logged.doc_id + 1
        letter = str(result.get("gt") or logged.target or "").strip().lower()
        if letter not in ("a", "b"):
            return SkippedRow(GROUP, where, f"no label A or B in the line (gt "
                                            f"{result.get('gt')!r}, target {logged.target!r})")
        if index in seen:
            return SkippedRow(GROUP, where, f"Index {index} logged twice")
        seen.add(index)
        q = question_from(logged.prompt, index, letter)
        checks.other_prompts += q is None or prompts.lmms_eval(q) != logged.prompt
        asked = q or Question(index, logged.prompt or "", "", f"({letter})")
        found, notes = labels(asked, "lmms-lab-eval/MMVP")
        extra = checks.where(logged)
        response = logged.response()
        logged_correct = result.get("is_correct")
        if isinstance(logged_correct, bool) and logged.filtered is not None and response.ok:
            extra["is_correct"] = logged_correct
            checks.compared += 1
            checks.differ += (lmms_letter(logged.filtered) == letter.upper()) != logged_correct
        checks.keep_filtered(logged, extra)
        meta: dict[str, Any] = {
            "item": str(index), "index": index, "pair": pair_of(index),
            "question": asked.question, "options": asked.options, "answer": asked.answer,
            "pattern": pattern(index), "prompt": "lmms-eval", "lmms_eval": extra}
        if notes:
            meta["label_notes"] = notes
        sample = Sample(id=f"{index}/lmms-eval", group=GROUP,
                        messages=(user(logged.prompt),) if logged.prompt is not None else (),
                        target={"published": found.published, "lmms_eval": found.lmms_eval,
                                "corrected": found.corrected}, metadata=meta)
        return Answered(sample, response)
