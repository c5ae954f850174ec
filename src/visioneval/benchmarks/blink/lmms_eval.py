"""BLINK answers logged by lmms-eval, as visioneval's own BLINK run records them, scored under
the lmms-eval protocol (the only one that sends lmms-eval's prompt: the paper's has no "Note"
line and adds a disclaimer to three tasks, VLMEvalKit's lists the options as "A. ...").

lmms-eval's 14 tasks `blink_<task>` ([L] lmms_eval/tasks/blink/blink_*.yaml, each naming one
config as `dataset_name`) log per sample the prompt (`input`: the "Note: ..." line then the
dataset's `prompt`, utils.py:31-38 and _default_template_yaml), the target (`answer`, "(A)"
...) and the metric field `blink_acc` (utils.py:100-111): `id` (the row's idx), `gt_content`
(the gold letter), `pred_parsed` (lmms-eval's letter), `pred`, `sub_task` and `is_correct`.
The options are read back from the prompt's "(A) ..." lines. The logged letter is checked
against the same extraction here. No image is logged, so intervals resample questions.
max_new_tokens 1024, no temperature (_default_template_yaml, generation_kwargs)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.blink import readings
from visioneval.benchmarks.blink.benchmark import scoring_only
from visioneval.benchmarks.blink.labels import corrected
from visioneval.benchmarks.blink.options import BlinkOptions
from visioneval.benchmarks.blink.questions import LETTERS
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io.lines import BadLines

# [L] lmms_eval/tasks/blink/blink_<task>.yaml: task name -> dataset_name (the config)
TASK_NAMES = {
    "blink_art_style": "Art_Style", "blink_counting": "Counting",
    "blink_forensic_detection": "Forensic_Detection",
    "blink_functional_correspondence": "Functional_Correspondence",
    "blink_iq_test": "IQ_Test", "blink_jigsaw": "Jigsaw",
    "blink_multi_view_reasoning": "Multi-view_Reasoning",
    "blink_object_localization": "Object_Localization",
    "blink_relative_depth": "Relative_Depth",
    "blink_relative_reflectance": "Relative_Reflectance",
    "blink_semantic_correspondence": "Semantic_Correspondence",
    "blink_spatial_relation": "Spatial_Relation",
    "blink_visual_correspondence": "Visual_Correspondence",
    "blink_visual_similarity": "Visual_Similarity"}
RESCORED = "visioneval.benchmarks.blink.definition:RESCORED"
PROTOCOL = "lmms-eval"
# _default_template_yaml: max_new_tokens 1024, no temperature (the model wrapper's own)
LMMS_GENERATION = {"temperature": None, "max_tokens": 1024, "seed": None}
LOGGED = "blink_acc"
NOTE = "Note: You only need to respond with "  # the pre_prompt's start
_OPTION = re.compile(r"^\(([A-E])\)\s?(.*)$", re.MULTILINE)
_GOLD = re.compile(r"^\(?([A-E])\)?$")


def options_in(prompt: str) -> list[str]:
    """The option texts of the prompt's "(A) ..." lines, in letter order from A; [] when
    the letters do not run A, B, C..."""
    found = _OPTION.findall(prompt)
    if [letter for letter, _ in found] != list(LETTERS[:len(found)]):
        return []
    return [text.strip() for _, text in found]


def question_in(prompt: str) -> str:
    """The question of a logged prompt: the dataset prompt without lmms-eval's "Note" line
    and without the options (what precedes the first "(A)" line)."""
    text = prompt.split("\n", 1)[1] if prompt.startswith(NOTE) and "\n" in prompt else prompt
    first = _OPTION.search(text)
    return (text[:first.start()] if first else text).strip()


class Checks(lmms_eval.Checks):
    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"lmms_eval_extraction": {"compared": self.compared,
                                                    "differ": self.differ},
                           "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        return [self.agreement("letter (pred_parsed)", "the same extraction here"),
                lmms_eval.PROMPT_NOTE,
                *self.counted((self.differ, "answers extract differently than lmms-eval "
                                            "logged: the log may have been changed"),
                              (self.other_prompts, "prompts are not the default template's "
                                                   "(a model-specific prompt, e.g. neo_ov): "
                                                   "scored by lmms-eval's rule all the same"))]


class BlinkLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's blink_* samples files."""

    task_names = TASK_NAMES

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        options = BlinkOptions(protocol=PROTOCOL, labels="both")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "lmms-eval samples logs; labels: the logged target, "
                               "corrections.json applied by idx",
                     "files": {TASK_NAMES[f.task]: [f.path.name] for f in logs}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict,
            notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        seen: set[str] = set()
        for log_file in logs:
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(logged, checks, seen)

    def _item(self, logged: lmms_eval.Logged, checks: Checks, seen: set[str]) -> Item:
        task = TASK_NAMES[logged.task]
        where = f"doc_id {logged.doc_id} ({logged.where})"
        field = logged.metric(LOGGED)
        field = field if isinstance(field, dict) else {}
        choices = options_in(logged.prompt or "")
        if len(choices) < 2:
            return SkippedRow(task, where, "the logged prompt (input) lists no options "
                                           "(A), (B) ...")
        gold = _GOLD.match(str(logged.target or field.get("gt_content") or "").strip())
        if gold is None or gold.group(1) not in LETTERS[:len(choices)]:
            return SkippedRow(task, where, f"target {logged.target!r} is not one of the "
                                           "options the logged prompt lists")
        idx = str(field.get("id") or f"{task}#{logged.doc_id}")
        if idx in seen:
            return SkippedRow(task, where, f"{idx} seen before")
        seen.add(idx)
        answer = f"({gold.group(1)})"
        extra = checks.where(logged)
        checks.other_prompts += not (logged.prompt or "").startswith(NOTE)
        parsed = field.get("pred_parsed")
        if isinstance(parsed, str) and logged.filtered is not None:
            checks.compared += 1
            checks.differ += readings.lmms_eval(logged.filtered) != parsed
            extra["pred_parsed"] = parsed
        checks.keep_filtered(logged, extra)
        meta: dict[str, Any] = {
            "item": idx, "task": task, "question": question_in(logged.prompt or ""),
            "choices": choices, "answer": answer, "letters": LETTERS[:len(choices)],
            "corrected": corrected(idx, answer), "prompt": PROTOCOL, "lmms_eval": extra}
        sample = Sample(id=f"{idx}/{PROTOCOL}", group=task, target=answer,
                        messages=(user(logged.prompt),) if logged.prompt is not None else (),
                        metadata=meta)
        return Answered(sample, logged.response())


__all__ = ["BlinkLmmsEval"]
