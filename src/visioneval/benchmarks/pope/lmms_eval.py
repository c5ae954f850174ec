"""POPE answers logged by lmms-eval, as visioneval's own POPE run records them, scored by the
protocol that reads lmms-eval's prompt (lmms-eval's own; the paper's and VLMEvalKit's read
the answer to the question alone, which lmms-eval never asks).

lmms-eval's tasks ([L] lmms_eval/tasks/pope/): pope_random, pope_pop and pope_adv (one
setting each, config Full), and pope (split test: the 9,000 questions together). Each line
logs `pope_accuracy` = {question_id, score, prediction, ground_truth} (utils.py lines
17-28), so the label and the question's id are in the log; the question is the logged
prompt without its suffix. The image is not: with `--data-dir` (the Hub copy's files) each
doc_id is joined with its row, which gives the image (the intervals' clusters) and, for the
pooled task, the setting; without it the image is the question's place in the files (six
questions an image, in the same order in every setting: [P] output/coco/*.json), and the
pooled task needs the data, or `doc.category` (logs of lmms-eval before v0.4 keep `doc`).

lmms-eval's own 0/1 score is checked against the same rule here on the text it scored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.pope import protocols
from visioneval.benchmarks.pope.benchmark import PopeOptions, prompt, scoring_only
from visioneval.benchmarks.pope.data import Located, locate
from visioneval.benchmarks.pope.labels import corrected
from visioneval.benchmarks.pope.spec import (
    LMMS,
    LMMS_MAX_TOKENS,
    LMMS_POOLED_TASK,
    LMMS_SUFFIX,
    LMMS_TASKS,
    NO,
    SETTINGS,
    YES,
)
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io import parquet
from visioneval.io.lines import BadLines

TASK_NAMES: dict[str, str | None] = {task: setting for setting, task in LMMS_TASKS.items()}
TASK_NAMES[LMMS_POOLED_TASK] = None  # the setting comes from the row
RESCORED = "visioneval.benchmarks.pope.definition:RESCORED"
"""The definition a re-scored run records (rebuilt without data)."""
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": LMMS_MAX_TOKENS, "seed": None}
SUFFIXES = (LMMS_SUFFIX, "\nYour response must be concise.")  # default, PLM's (pope.yaml)


@dataclass(frozen=True)
class Row:
    """What a data row tells about a doc_id."""

    setting: str
    question_id: str
    question: str
    answer: str
    image: str


def question_of(logged_prompt: str | None) -> tuple[str | None, bool]:
    """(the question, whether the prompt is lmms-eval's default one verbatim)."""
    if logged_prompt is None:
        return None, False
    for suffix in SUFFIXES:
        if logged_prompt.endswith(suffix):
            return logged_prompt[:-len(suffix)], suffix == LMMS_SUFFIX
    return logged_prompt, False


class Checks(lmms_eval.Checks):
    """What the reading found besides the records (run.json and the printout)."""

    def __init__(self) -> None:
        super().__init__()
        self.no_data = 0
        self.label_differs = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {
            "lmms_eval_score": {"compared": self.compared, "differ": self.differ},
            "prompts_not_default": self.other_prompts,
            "image_from_question_id": self.no_data,
            "label_differs_from_data": self.label_differs,
            "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        out = [self.agreement("score", "the same rule here")]
        out += self.counted(
            (self.differ, "answers score differently than lmms-eval logged: the log may "
                          "have been changed"),
            (self.other_prompts, "prompts are not lmms-eval's default (the question and "
                                 "\"Answer the question using a single word or phrase.\")"),
            (self.no_data, "answers have their image from their question_id (six questions "
                           "an image): give --data-dir for the images' names"),
            (self.label_differs, "logged labels differ from the data's: is the data the "
                                 "copy lmms-eval read?"))
        out.append("the paper's and VLMEvalKit's protocols read the answer to the question "
                   "alone, which lmms-eval does not ask: only lmms-eval's protocol is scored")
        return out


def _index(located: Located, setting: str | None) -> list[Row] | None:
    """Each doc_id's row: a setting's rows (its Full split, or its rows of the test split),
    or for the pooled task (`setting` None) the test split's rows in order (None when the
    data has no test split)."""
    if setting is None:
        files = sorted(p for p in located.root.rglob("test-*.parquet") if p.is_file())
        wanted = None
        if not files:
            return None
    else:
        files = located.files[setting]
        wanted = set(located.rows[setting]) if located.rows is not None else None
    rows = []
    for row in parquet.iter_rows(files, ("question_id", "question", "answer", "image_source",
                                         "category"), wanted=wanted):
        v = row.values
        rows.append(Row(str(v.get("category") or setting or "").strip().lower(),
                        str(v.get("question_id") or "").strip(), str(v.get("question") or ""),
                        str(v.get("answer") or "").strip().lower(),
                        str(v.get("image_source") or "").strip()))
    return rows


class PopeLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's POPE samples files."""

    task_names = TASK_NAMES

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        pooled = any(TASK_NAMES[f.task] is None for f in logs)
        named = [s for s in SETTINGS if any(TASK_NAMES[f.task] == s for f in logs)]
        settings = list(SETTINGS) if pooled else named
        located = locate(request.data_dir, settings) if request.data_dir else None
        options = PopeOptions(settings=settings, protocol=LMMS, labels="both")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "lmms-eval samples logs" + (
                         f"; images and settings from {located.source}" if located else ""),
                     "files": {f.task: [f.path.name] for f in logs}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, located, bad, checks),
            checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], located: Located | None, bad: BadLines,
               checks: Checks) -> Iterator[Item]:
        for log_file in logs:
            setting = TASK_NAMES[log_file.task]
            rows = _index(located, setting) if located else None
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(setting, rows, logged, checks)

    def _item(self, setting: str | None, rows: list[Row] | None, logged: lmms_eval.Logged,
              checks: Checks) -> Item:
        where = f"doc_id {logged.doc_id} ({logged.where})"
        field = logged.metric("pope_accuracy")
        field = field if isinstance(field, dict) else {}
        label = str(field.get("ground_truth") or logged.target or "").strip().lower()
        question_id = str(field.get("question_id") or "").strip()
        question, default = question_of(logged.prompt)
        row = None
        if rows is not None:
            if logged.doc_id >= len(rows):
                return SkippedRow(setting or "pope", where, f"past the {len(rows)} rows of "
                                  "the data (is the data the copy lmms-eval read?)")
            row = rows[logged.doc_id]
            checks.label_differs += bool(label) and label != row.answer
            label, question_id = row.answer, row.question_id
            question = question or row.question
            setting = setting or row.setting
        if setting is None:
            category = (logged.doc or {}).get("category")
            setting = str(category).strip().lower() if category else None
        if setting not in SETTINGS:
            return SkippedRow("pope", where, "the task pope pools the settings and the log "
                              "does not say this question's: give --data-dir with the Hub "
                              "copy (data/test-*.parquet)")
        if label not in (YES, NO) or not question_id.isdigit() or not question:
            return SkippedRow(setting, where, "no question_id, yes/no label or prompt in the "
                              "line (pope_accuracy, target, input)")
        checks.other_prompts += not default
        image = row.image if row else f"image {(int(question_id) - 1) // 6 + 1} of the files"
        checks.no_data += row is None
        extra = checks.where(logged)
        logged_score = lmms_eval.score_field(field)
        if logged_score is not None:
            extra["pope_accuracy"] = logged_score
            if logged.filtered is not None and logged.response().ok:
                checks.compared += 1
                checks.differ += float(protocols.correct(
                    LMMS, protocols.lmms_reading(logged.filtered), label)) != logged_score
        checks.keep_filtered(logged, extra)
        item = f"{setting}/{question_id}"
        fixed = corrected(item, image if row else None, question, label)
        meta: dict[str, Any] = {"item": item, "setting": setting, "question_id": question_id,
                                "image": image, "question": question, "family": LMMS,
                                "lmms_eval": extra}
        if fixed.problem:
            meta["label_problem"] = fixed.problem
        sample = Sample(id=f"{item}/{LMMS}", group=setting,
                        target={"answer": label, "corrected": fixed.label},
                        messages=(user(logged.prompt or prompt(LMMS, question)),),
                        metadata=meta)
        return Answered(sample, logged.response())
