"""SalBench answers logged by lmms-eval, as visioneval's own SalBench run records them.

lmms-eval's SalBench tasks (`lmms_eval/tasks/salbench/`, PR #744 by the paper's author):
one task per HF config, `p3`, `p3_box`, `p3_box_img`, `o3`, `o3_box`, `o3_box_img`
(`dataset_name` P3 ... O3_box_img), zero-shot, `doc_to_text` = the question plus "Answer
the question using a single word or phrase.", `doc_to_target: "answer"`, max_new_tokens 128
and no sampling settings. Its log line keeps `target` (the answer), `input` (the prompt) and
the metric fields of `process_results`, whose `all_cat_*` entries carry `{"id": image_id}`:
the only place the image id survives (`doc` is dropped from v0.4, and before that every key
holding "image" was). So a sample's id, config, target and metadata are rebuilt from the log
alone; no data is read and no image is known (the record's prompt is text only).

The raw response (`resps` where logged) is scored by visioneval's strict and lenient
parsers; lmms-eval's own exact match (on `filtered_resps`) is checked against the strict
parser, the same rule, as a test of the reading."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.salbench.benchmark import SalBenchOptions, ScoringOnly
from visioneval.benchmarks.salbench.parse import strict_tokens, target_labels
from visioneval.benchmarks.salbench.spec import CONFIGS, LMMS_EVAL_SUFFIX
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.idset import digest
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io.lines import BadLines

# lmms-eval task -> HF config (the task yaml's dataset_name).
TASKS = {config.lower(): config for config in CONFIGS}
# The yamls' generation_kwargs: max_new_tokens only (temperature and sampling left unset).
LMMS_GENERATION = {"temperature": None, "max_tokens": 128, "seed": None}
RESCORED = "visioneval.benchmarks.salbench.definition:RESCORED"
"""The definition a re-scored run records (rebuilt without data)."""
ID_METRICS = ("all_cat_f1", "all_cat_precision", "all_cat_recall")


class Checks(lmms_eval.Checks):
    """What the reading found besides the records, for run.json and the printout (the
    logged exact match compared; prompts that are not question + lmms-eval's suffix)."""

    def __init__(self) -> None:
        super().__init__()
        self.without_id = 0  # samples whose line carries no image id

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {
            "lmms_eval_exact_match": {"compared": self.compared, "differ": self.differ},
            "prompts_without_lmms_eval_suffix": self.other_prompts,
            "samples_without_image_id": self.without_id,
            "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        return [self.agreement("exact match", "the strict parser"), *self.counted(
            (self.differ, "answers score differently under lmms-eval's logged exact match "
                          "than under the same rule here: the log may have been edited or "
                          "written by a changed task"),
            (self.without_id, "lines carry no image id (no all_cat_* field); their samples "
                              "are named by doc_id (#N)"),
            (self.other_prompts, "prompts are not the question plus lmms-eval's one-word "
                                 "suffix (custom pre/post prompt?)"))]


class SalBenchLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's SalBench samples files."""

    task_names = TASKS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        configs = [c for c in CONFIGS if any(TASKS[f.task] == c for f in logs)]
        limits = {found.facts[f.path].limited_to for f in logs}
        options = SalBenchOptions(configs=configs, shots=0, prompt="lmms-eval",
                                  num_samples=limits.pop() if len(limits) == 1 else None)
        checks = Checks()
        return Source(
            benchmark=ScoringOnly(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "lmms-eval samples logs (answers and labels; no images)",
                     "files": {TASKS[f.task]: [f.path.name] for f in logs}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks),
            checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks) -> Iterator[Item]:
        for log_file in logs:
            config = TASKS[log_file.task]
            seen: set[bytes] = set()  # 16-byte digests of the image ids met in this file
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(config, logged, seen, checks)

    def _item(self, config: str, logged: lmms_eval.Logged, seen: set[bytes],
              checks: Checks) -> Item:
        spec = CONFIGS[config]
        doc = logged.doc or {}
        answer = logged.target if logged.target else doc.get("answer")
        where = f"doc_id {logged.doc_id} ({logged.where})"
        if not isinstance(answer, str) or not answer.strip():
            return SkippedRow(config, where, "no target (the answer) in the log line")
        outside = target_labels(answer) - set(spec.classes)
        if outside:
            return SkippedRow(config, where, f"answer {answer!r} has label(s) "
                              f"{', '.join(sorted(outside))} outside the {spec.dataset} "
                              f"classes ({', '.join(spec.classes)})")
        image_id = _image_id(logged)
        if image_id is None:
            checks.without_id += 1
        name = image_id if image_id is not None else f"#{logged.doc_id}"
        # As a run names a repeated image id within a config: `<id>#<row>` after the first.
        key = digest(name)
        sample_id = f"{config}/{name}" + (f"#{logged.doc_id}" if key in seen else "")
        seen.add(key)
        self._check(logged, answer, checks)
        response = logged.response()
        extra = checks.where(logged)
        checks.keep_filtered(logged, extra)
        logged_em = lmms_eval.score_field(logged.metric("exact_match"))
        if logged_em is not None:
            extra["exact_match"] = logged_em
        sample = Sample(
            id=sample_id, group=config, target=answer,
            messages=(user(logged.prompt),) if logged.prompt is not None else (),
            metadata={"config": config, "task": spec.task, "dataset": spec.dataset,
                      "image_id": name, "row": logged.doc_id, "shots": 0, "prompt": "lmms-eval",
                      "lmms_eval": extra})
        return Answered(sample, response)

    @staticmethod
    def _check(logged: lmms_eval.Logged, answer: str, checks: Checks) -> None:
        """lmms-eval's logged exact match against the same rule here, on the text it scored;
        and whether the prompt is the question plus lmms-eval's suffix."""
        if logged.prompt is not None and not logged.prompt.endswith(LMMS_EVAL_SUFFIX):
            checks.other_prompts += 1
        logged_em = lmms_eval.score_field(logged.metric("exact_match"))
        if logged_em is None or logged.filtered is None:
            return
        checks.compared += 1
        ours = float(strict_tokens(logged.filtered) == target_labels(answer))
        checks.differ += ours != logged_em


def _image_id(logged: lmms_eval.Logged) -> str | None:
    for key in ID_METRICS:
        value = logged.metric(key)
        if isinstance(value, dict) and value.get("id") not in (None, ""):
            return str(value["id"])
    doc_id = (logged.doc or {}).get("image_id")
    return str(doc_id) if doc_id not in (None, "") else None

