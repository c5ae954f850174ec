"""HallusionBench answers in VLMEvalKit's prediction file (`<model>_HallusionBench.xlsx|tsv|
json`), as visioneval's own run records them, scored under every protocol (all three send
VLMEvalKit's prompt: the question, [V] image_base.py `build_prompt`).

A row of VLMEvalKit's HallusionBench.tsv ([V] image_yorn.py, yorn.py `Hallusion_rating`
lines 96-145) holds `index`, `question`, `answer` ("Yes"/"No"), `category` and `l2-category`
(VD_illusion). Hallusion_rating reads the set, figure and question from the index's 4th, 5th
and 6th underscore-separated parts (lines 117-119); the 1st and 2nd are the category and
subcategory, and the 3rd is read here as the paper's `visual_input` (1 the original figure,
2 an edited one), which the file has no other column for. The detailed answer the paper's
grader is shown is `gt_answer_details` when the file has that column, else the Yes/No."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.hallusionbench.benchmark import HallusionBenchOptions, scoring_only
from visioneval.benchmarks.hallusionbench.items import Item as Question
from visioneval.benchmarks.hallusionbench.lmms_eval import RESCORED
from visioneval.benchmarks.hallusionbench.spec import CATEGORIES, SUBCATEGORIES
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"HallusionBench": "image"}
ANSWERS = {"yes": "1", "no": "0"}


def question_of(row: vlmevalkit.Row) -> Question | str:
    """The question a row holds, or why it holds none."""
    parts = row.get("index").strip().split("_")
    if len(parts) != 6 or not all(p.isdigit() for p in parts[2:]):
        return (f"index {row.get('index')!r} is not <category>_<subcategory>_<visual input>_"
                "<set>_<figure>_<question>")
    category, subcategory, visual_input, set_id, figure_id, question_id = parts
    if category not in CATEGORIES or subcategory not in SUBCATEGORIES[category] or \
            visual_input not in ("1", "2"):
        return f"index {row.get('index')!r} names no HallusionBench question with a figure"
    answer = ANSWERS.get(row.get("answer").strip().lower())
    question = row.get("question")
    if answer is None or not question.strip():
        return "no Yes/No answer or question in the row"
    details = row.get("gt_answer_details") or row.get("answer").strip()
    return Question(category, subcategory, visual_input, set_id, figure_id, question_id,
                    question, answer, details)


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.l2_differs = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"l2_category_differs_from_index": self.l2_differs}}

    def notes(self) -> list[str]:
        return [vlmevalkit.PROMPT_NOTE,
                "VLMEvalKit asks the 951 questions with a figure: the paper's protocol is "
                "scored here on those only"] + self.counted(
            (self.l2_differs, "rows' l2-category differs from their index: is this "
                              "VLMEvalKit's HallusionBench.tsv?"))


class HallusionBenchVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's HallusionBench prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = HallusionBenchOptions(protocol="all")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "VLMEvalKit prediction files (HallusionBench.tsv's rows; "
                               "no images)",
                     "files": {"image": [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield self._item(row, checks)

    def _item(self, row: vlmevalkit.Row, checks: Checks) -> Item:
        item = question_of(row)
        if isinstance(item, str):
            return SkippedRow("image", row.where, item)
        l2 = row.get("l2-category").strip()
        checks.l2_differs += bool(l2) and l2 != item.l2
        meta = item.metadata() | {"split": "image", "row": row.number,
                                  "vlmevalkit": checks.where(row)}
        sample = Sample(id=item.key, group=item.l2, messages=(user(item.question),),
                        target={"gt_answer": item.gt_answer,
                                "gt_answer_details": item.gt_answer_details},
                        metadata=meta)
        return Answered(sample, row.response())


__all__ = ["HallusionBenchVlmEvalKit"]
