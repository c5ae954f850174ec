"""NaturalBench answers logged by lmms-eval, as visioneval's own NaturalBench run records
them, scored under every protocol that sends their prompt.

lmms-eval's task `naturalbench` (`lmms_eval/tasks/naturalbench/`) reads the flattened copy
BaiqiL/NaturalBench-lmms-eval: 7,600 docs, doc `Index` i is item i % 4 (q0_i0, q0_i1, q1_i0,
q1_i1) of group i // 4 (utils.py:187-195 rebuilds the groups that way). Greedy, max_new_tokens
16 (naturalbench.yaml:10-15). Its prompt is the question, a space and the suffix
(utils.py:152-158), which lmms-eval and VLMEvalKit send and the paper does not: the logged
prompt says which (a prompt ending in the suffix right after the question is the paper's).

The question type is the doc's `Question_Type` where the log keeps the doc, else read from
the prompt's suffix; the answer column is the doc's `answer` where kept (label set
"corrected"), else only the fixed layout is scored. lmms-eval logs the extracted answer
(1, 0, -1) under `naturalbench_G_ACC` (`naturalbench_score` before its commit 7d7223f6):
it is checked against the same extraction here, on the text lmms-eval scored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.naturalbench import protocols
from visioneval.benchmarks.naturalbench.benchmark import scoring_only
from visioneval.benchmarks.naturalbench.options import NaturalBenchOptions
from visioneval.benchmarks.naturalbench.spec import (
    FIXED_LAYOUT,
    ITEM_NAMES,
    LABELS,
    QUESTION_TYPES,
    SUFFIX,
)
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io.lines import BadLines

TASK_NAMES = {"naturalbench": "naturalbench"}
RESCORED = "visioneval.benchmarks.naturalbench.definition:RESCORED"
"""The definition a re-scored run records (rebuilt without data)."""
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": 16, "seed": None}  # naturalbench.yaml
LOGGED_KEYS = ("naturalbench_G_ACC", "naturalbench_score")


def read_prompt(prompt: str | None, doc: dict[str, Any] | None
                ) -> tuple[str | None, str | None, bool]:
    """(question type, prompt family, whether the prompt is that family's text exactly
    for the doc's question) of a logged prompt."""
    qtype = doc.get("Question_Type") if doc else None
    if qtype not in QUESTION_TYPES:
        qtype = next((t for t in QUESTION_TYPES if prompt and prompt.endswith(SUFFIX[t])),
                     None)
    if qtype is None or not prompt or not prompt.endswith(SUFFIX[qtype]):
        return qtype, None, False
    head = prompt[:-len(SUFFIX[qtype])]
    family = "spaced" if head.endswith(" ") else "paper"
    question = doc.get("Question") if doc else None
    verbatim = isinstance(question, str) and \
        protocols.prompt(question, qtype, family) == prompt
    return qtype, family, verbatim


class Checks(lmms_eval.Checks):
    """What the reading found besides the records: the logged extraction compared, the
    prompts per family, prompts not verbatim."""

    def __init__(self) -> None:
        super().__init__()
        self.families: dict[str, int] = {}
        self.verbatim = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {
            "lmms_eval_extraction": {"compared": self.compared, "differ": self.differ},
            "prompt_families": dict(self.families),
            "prompts_checked_verbatim": self.verbatim,
            "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        out = ["answers per prompt (paper: no space; spaced: lmms-eval's): " + ", ".join(
            f"{family} {n}" for family, n in self.families.items()),
            self.agreement("extracted answer", "the same extraction here")]
        out += self.counted(
            (self.differ, "answers extract differently than lmms-eval logged: the log may "
                          "have been changed"))
        return out


class NaturalBenchLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's naturalbench samples files."""

    task_names = TASK_NAMES

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        first = next(iter(lmms_eval.read(logs[0], BadLines())), None) if logs else None
        doc = first.doc if first is not None else None
        _, family, _ = read_prompt(first.prompt if first else None, doc)
        labels = "both" if doc and "answer" in doc else "original"
        options = NaturalBenchOptions(protocol="paper" if family == "paper" else "harnesses",
                                      labels=labels)
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "lmms-eval samples logs; labels: the fixed layout"
                               + (" and the logged docs' answer column"
                                  if labels == "both" else ""),
                     "files": {"naturalbench": [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks),
            checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks) -> Iterator[Item]:
        for log_file in logs:
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(logged, checks)

    def _item(self, logged: lmms_eval.Logged, checks: Checks) -> Item:
        doc = logged.doc or {}
        index = doc.get("Index", logged.doc_id)
        where = f"doc_id {logged.doc_id} ({logged.where})"
        if not isinstance(index, int) or index < 0:
            return SkippedRow("naturalbench", where, f"Index {index!r} is not a whole number")
        qtype, family, verbatim = read_prompt(logged.prompt, doc)
        if qtype is None or family is None:
            return SkippedRow("naturalbench", where, "the prompt ends with neither "
                              "NaturalBench suffix, and the doc has no Question_Type")
        checks.families[family] = checks.families.get(family, 0) + 1
        checks.verbatim += verbatim
        group, position = f"{index // 4:04d}", ITEM_NAMES[index % 4]
        extra = checks.where(logged)
        logged_code = next((lmms_eval.score_field(logged.metric(k)) for k in LOGGED_KEYS
                            if logged.metric(k) is not None), None)
        if logged_code is not None:
            extra["extracted"] = logged_code
            if logged.filtered is not None:
                checks.compared += 1
                checks.differ += protocols.extract_answer(logged.filtered, qtype) != \
                    logged_code
        checks.keep_filtered(logged, extra)
        column = protocols.read_label(doc.get("answer"), qtype)
        target = {"original": LABELS[qtype][FIXED_LAYOUT[position]],
                  "corrected": None if column is None else LABELS[qtype][column]}
        meta = {"group_id": group, "row": index // 4, "type": qtype, "index": index,
                "item": f"{group}/{position}", "position": position, "family": family,
                "lmms_eval": extra}
        sample = Sample(id=f"{group}/{position}/{family}", group=qtype, target=target,
                        messages=(user(logged.prompt),) if logged.prompt is not None else (),
                        metadata=meta)
        return Answered(sample, logged.response())


__all__ = ["NaturalBenchLmmsEval"]
