"""HallusionBench answers logged by lmms-eval, as visioneval's own run records them, scored
under every protocol (all three send the prompt lmms-eval sent: the question).

lmms-eval's task `hallusion_bench_image` ([L] hallusion_bench_image.yaml) asks the 951
questions of the `image` split, greedy, max_new_tokens 128. Its `hb_process_results`
(evaluate_hb.py:42-45) returns the question's row without the image, plus
`model_prediction`, under each metric name (`aAcc`, `fAcc`, `qAcc`); so a samples line holds
everything the scores need (category, set, figure, question, labels) whatever lmms-eval
version wrote it, and no data is read. Before v0.4 the same row is also in `doc`.

The log keeps no per-question score (lmms-eval grades with GPT-4 only when it aggregates),
so the checks are of the prompt: the logged `input` should be the question verbatim (the
YAML's pre- and post-prompt are empty), and the logged `target` the detailed answer."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.hallusionbench.benchmark import HallusionBenchOptions, scoring_only
from visioneval.benchmarks.hallusionbench.items import parse_row
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io.lines import BadLines

TASK = "hallusion_bench_image"
RESCORED = "visioneval.benchmarks.hallusionbench.definition:RESCORED"
"""The definition a re-scored run records (rebuilt without data)."""
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": 128, "seed": None}  # the task yaml
ROW_FIELDS = ("aAcc", "fAcc", "qAcc")  # each holds the question's row (evaluate_hb.py:45)


def logged_row(logged: lmms_eval.Logged) -> dict[str, Any] | None:
    """The question's row as the line keeps it: a metric field, else (before v0.4) `doc`."""
    for name in ROW_FIELDS:
        found = logged.metric(name)
        if isinstance(found, dict):
            return found
    return logged.doc


class Checks(lmms_eval.Checks):
    """What the reading found besides the records: prompts and targets that are not the
    question's and its detailed answer."""

    def __init__(self) -> None:
        super().__init__()
        self.other_targets = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"prompts_not_the_question": self.other_prompts,
                           "targets_not_the_details": self.other_targets,
                           "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        out = ["lmms-eval asks the 951 questions with a figure: the paper's protocol is "
               "scored here on those only (its 178 questions without a figure are not in "
               "the log)",
               "lmms-eval's own numbers come from its GPT-4 grader, which it does not log per "
               "question; these are the answers read by each protocol's rule"]
        out += self.counted(
            (self.other_prompts, "prompts are not the question verbatim (a pre- or "
                                 "post-prompt was set)"),
            (self.other_targets, "targets are not the question's detailed answer"))
        return out


class HallusionBenchLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's hallusion_bench_image samples files."""

    task_names = {TASK: "image"}

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        options = HallusionBenchOptions(protocol="all")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "lmms-eval samples logs (each line holds its question's row; "
                               "no images)",
                     "files": {"image": [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict,
            notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines,
               checks: Checks) -> Iterator[Item]:
        for log_file in logs:
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(logged, checks)

    def _item(self, logged: lmms_eval.Logged, checks: Checks) -> Item:
        where = f"doc_id {logged.doc_id} ({logged.where})"
        row = logged_row(logged)
        if row is None:
            return SkippedRow("image", where, "the line holds no question row (aAcc, fAcc, "
                              "qAcc or doc)")
        try:
            item = parse_row(row)
        except ValueError as exc:
            return SkippedRow("image", where, str(exc))
        checks.other_prompts += logged.prompt is not None and \
            logged.prompt.strip() != item.question.strip()
        checks.other_targets += logged.target is not None and \
            logged.target.strip() != item.gt_answer_details.strip()
        extra = checks.where(logged)
        checks.keep_filtered(logged, extra)
        meta = item.metadata() | {"split": "image", "row": logged.doc_id, "lmms_eval": extra}
        prompt = logged.prompt if logged.prompt is not None else item.question
        sample = Sample(id=item.key, group=item.l2, messages=(user(prompt),),
                        target={"gt_answer": item.gt_answer,
                                "gt_answer_details": item.gt_answer_details},
                        metadata=meta)
        return Answered(sample, logged.response())
