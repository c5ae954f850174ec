"""IllusionBench answers logged by lmms-eval, as visioneval's own IllusionBench run records
them, scored under every protocol that reads their prompt family.

lmms-eval's tasks (`lmms_eval/tasks/unig2u/illusionbench/` on main, `lmms_eval/tasks/
illusionbench/` before commit 5753e51b): `[unig2u_]illusionbench_arshia_<icon|logo|in>_
<shape|scene>_test`, one request per image and task, greedy, max_new_tokens 64. Which prompt
the model saw decides the family: main sends the original paper's prompts (byte for byte
ours, `prompts.original_prompt`) and logs substring recall; commit 5917cab6 sent the
"Answer: <your choice>" prompts (`prompts.lmms_prompt`) and logged strict match. The logged
`input` is compared with both, per line. Labels come from the data lmms-eval read
(`lmms_eval_data`): its log keeps no image name.

lmms-eval's own 0/1 score is checked against the same rule here (recall for the original
family, strict for the other), on the text it scored: a disagreement means the doc_id does
not point at the row lmms-eval saw (another data file) or the log was changed."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.illusionbench import lmms_eval_data, names, protocols
from visioneval.benchmarks.illusionbench.benchmark import IllusionBenchOptions, scoring_only
from visioneval.benchmarks.illusionbench.prompts import lmms_prompt, original_prompt
from visioneval.benchmarks.illusionbench.spec import SUBSETS, TASKS
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import lmms_eval
from visioneval.io.lines import BadLines

# lmms-eval task -> (subset, task).
TASK_NAMES = {f"{prefix}illusionbench_arshia_{subset.lower()}_{task}_test": (subset, task)
              for prefix in ("unig2u_", "") for subset in SUBSETS for task in TASKS}
RESCORED = "visioneval.benchmarks.illusionbench.definition:RESCORED"
"""The definition a re-scored run records (rebuilt without data)."""
LMMS_GENERATION = {"temperature": 0.0, "max_tokens": 64, "seed": None}  # the task yamls
_VISUAL_COT = re.compile(r"(?:unig2u_)?illusionbench_arshia_\w+_visual_cot")
_ZHANG = ("lmms-eval's other IllusionBench (Zhang et al., arXiv 2501.00848: true/false and "
          "multiple-choice questions about illusions), a different benchmark from the "
          "IllusionBench of arXiv 2411.06287 that visioneval runs")


def family_of(prompt: str | None, subset: str, task: str) -> tuple[str, bool]:
    """(prompt family, whether the prompt is that family's text exactly)."""
    if prompt == original_prompt(subset, task):
        return "original", True
    if prompt == lmms_prompt(subset, task):
        return "lmms", True
    return ("lmms" if prompt and "Answer: <your choice>" in prompt else "original"), False


class Checks(lmms_eval.Checks):
    """What the reading found besides the records, for run.json and the printout (the
    logged 0/1 score compared; prompts that are neither family's text verbatim)."""

    def __init__(self) -> None:
        super().__init__()
        self.families: dict[str, int] = {}

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {
            "lmms_eval_score": {"compared": self.compared, "differ": self.differ},
            "prompt_families": dict(self.families),
            "prompts_not_verbatim": self.other_prompts,
            "raw_differs_from_filtered": self.raw_differs}}

    def notes(self) -> list[str]:
        out = ["answers per prompt (original, lmms-eval's 'Answer:' prompts): " + ", ".join(
                   f"{family} {n}" for family, n in self.families.items()),
               self.agreement("score", "the same rule here")]
        out += self.counted(
            (self.differ, "answers score differently than lmms-eval logged: the data may not "
                          "be the file lmms-eval read (check --data-dir)"),
            (self.other_prompts, "prompts are neither prompt's text verbatim; which one they "
                                 "are was read from the 'Answer: <your choice>' line"))
        if "original" not in self.families:
            out.append("no answer to the original prompts: the original and lmms-recall "
                       "protocols have nothing to score")
        if "lmms" not in self.families:
            out.append("no answer to lmms-eval's 'Answer:' prompts: the lmms-strict protocol "
                       "has nothing to score")
        return out


class IllusionBenchLmmsEval(lmms_eval.Reader):
    """The reader of lmms-eval's IllusionBench samples files."""

    task_names = TASK_NAMES

    def other_benchmark(self, task: str) -> str | None:
        if task in ("illusionbench", "illusionbench_all"):
            return _ZHANG
        if _VISUAL_COT.fullmatch(task):
            return ("IllusionBench's visual chain-of-thought variant (the model answers after "
                    "a second, generated image), which no visioneval protocol defines")
        return None

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = lmms_eval.provenance(logs, request, LMMS_GENERATION)
        wanted = {TASK_NAMES[f.task] for f in logs}
        subsets = [s for s in SUBSETS if any(s == w[0] for w in wanted)]
        tasks = [t for t in TASKS if any(t == w[1] for w in wanted)]
        data: dict[str, lmms_eval_data.SubsetData] = {}
        sources: dict[str, str] = {}
        for subset in subsets:
            recorded = lmms_eval.common(found.facts[f.path].data_files() for f in logs
                                        if TASK_NAMES[f.task][0] == subset)
            files, sources[subset] = lmms_eval_data.locate(subset, request.data_dir, recorded)
            data[subset] = lmms_eval_data.SubsetData(files, lmms_eval_data.index(files))
        options = IllusionBenchOptions(subsets=subsets, tasks=tasks, protocol="all")
        checks = Checks()
        every = [f for d in data.values() for f in d.files]
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "lmms-eval samples logs; labels from "
                               + "; ".join(f"{s}: {src}" for s, src in sources.items()),
                     "fingerprint": lmms_eval_data.fingerprint(every),
                     "files": {s: [f.path.name for f in logs if TASK_NAMES[f.task][0] == s]
                               for s in subsets},
                     "data_files": {s: [str(f) for f in d.files] for s, d in data.items()},
                     "data_rows": {s: len(d.docs) for s, d in data.items()}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, data, bad, checks),
            checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], data: dict[str, lmms_eval_data.SubsetData],
               bad: BadLines, checks: Checks) -> Iterator[Item]:
        for log_file in logs:
            subset, task = TASK_NAMES[log_file.task]
            for logged in lmms_eval.read(log_file, bad):
                yield self._item(subset, task, data[subset].docs, logged, checks)

    def _item(self, subset: str, task: str, docs: list[lmms_eval_data.Doc],
              logged: lmms_eval.Logged, checks: Checks) -> Item:
        where = f"doc_id {logged.doc_id} ({logged.where})"
        if logged.doc_id >= len(docs):
            return SkippedRow(subset, where, f"past the {len(docs)} rows lmms-eval keeps of "
                              "the data (is the data the file lmms-eval read?)")
        doc = docs[logged.doc_id]
        try:
            parsed = names.parse(subset, doc.image_name)
        except names.BadImageName as exc:
            return SkippedRow(subset, f"image_name {doc.image_name} ({logged.where})", str(exc))
        family, verbatim = family_of(logged.prompt, subset, task)
        checks.families[family] = checks.families.get(family, 0) + 1
        checks.other_prompts += not verbatim
        label = parsed.shape if task == "shape" else parsed.scene
        extra = checks.where(logged)
        logged_score = lmms_eval.score_field(logged.metric(f"{task}_recall"))
        if logged_score is not None:
            extra[f"{task}_recall"] = logged_score
            if logged.filtered is not None:
                rule = protocols.lmms_strict if family == "lmms" else protocols.lmms_recall
                checks.compared += 1
                checks.differ += float(rule(logged.filtered, label)[1]) != logged_score
        checks.keep_filtered(logged, extra)
        meta = {"subset": subset, "image_name": doc.image_name, "row": doc.row,
                "shape": parsed.shape, "scene": parsed.scene, "difficulty": parsed.difficulty,
                "task": task, "family": family, "lmms_eval": extra}
        sample = Sample(id=f"{subset}/{doc.image_name}/{task}/{family}{doc.suffix}",
                        group=subset, target={"shape": parsed.shape, "scene": parsed.scene},
                        messages=(user(logged.prompt),) if logged.prompt is not None else (),
                        metadata=meta)
        return Answered(sample, logged.response())

