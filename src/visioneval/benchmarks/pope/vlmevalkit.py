"""POPE answers in VLMEvalKit's prediction file (`<model>_POPE.xlsx|tsv|json`), as
visioneval's own POPE run records them, scored by every protocol that reads the prompt
VLMEvalKit sends: the question as it is ([V] image_base.py `build_prompt`), which the paper's
protocol sends too. So each answer is read by the paper's rule and VLMEvalKit's; lmms-eval's
protocol asks with its own suffix, which VLMEvalKit never sent.

A row of VLMEvalKit's POPE.tsv ([V] image_yorn.py, yorn.py `POPE_rating` lines 148-187)
holds `index`, `question`, `answer` ("Yes"/"No") and `category`, the settings the question
belongs to, comma-separated (POPE_rating splits them, line 160): the row becomes one sample
per setting, as VLMEvalKit counts it. The image is not in the file; a `question_id` or
`image_source` column is used when the file has one, else the row's index names it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.pope.benchmark import PopeOptions, prompt, scoring_only
from visioneval.benchmarks.pope.labels import corrected
from visioneval.benchmarks.pope.lmms_eval import RESCORED
from visioneval.benchmarks.pope.spec import NO, PAPER, SETTINGS, YES
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"POPE": "POPE"}


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.several_settings = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"rows_in_several_settings": self.several_settings}}

    def notes(self) -> list[str]:
        out = [vlmevalkit.PROMPT_NOTE,
               "VLMEvalKit sends the question alone: the paper's and VLMEvalKit's protocols "
               "read these answers; lmms-eval's asks with its own suffix and is not scored"]
        out += self.counted((self.several_settings, "rows name several settings and count "
                                                    "in each, as in VLMEvalKit"))
        return out


class PopeVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's POPE prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = PopeOptions(protocol="all", labels="both")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(mode="json"),
            dataset={"source": "VLMEvalKit prediction files (POPE.tsv's rows; no images)",
                     "files": {"POPE": [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield from self._row_items(row, checks)

    def _row_items(self, row: vlmevalkit.Row, checks: Checks) -> Iterator[Item]:
        index = row.get("index").strip()
        label = row.get("answer").strip().lower()
        question = row.get("question")
        named = [s.strip().lower() for s in row.get("category").split(",") if s.strip()]
        settings = [s for s in SETTINGS if s in named]
        if not settings or len(settings) != len(named):
            yield SkippedRow("pope", row.where, f"category {row.get('category')!r} does not "
                             f"name settings among {', '.join(SETTINGS)}")
            return
        if label not in (YES, NO) or not question.strip():
            yield SkippedRow(settings[0], row.where, "no Yes/No answer or question in the row")
            return
        checks.several_settings += len(settings) > 1
        question_id = row.get("question_id").strip() or index
        image = row.get("image_source").strip() or None
        for setting in settings:
            item = f"{setting}/{question_id}"
            fixed = corrected(item, image, question, label)
            meta: dict[str, Any] = {
                "item": item, "setting": setting, "question_id": question_id,
                "image": image or f"index {index}", "question": question, "family": PAPER,
                "vlmevalkit": checks.where(row)}
            if fixed.problem:
                meta["label_problem"] = fixed.problem
            sample = Sample(id=f"{item}/{PAPER}", group=setting,
                            target={"answer": label, "corrected": fixed.label},
                            messages=(user(prompt(PAPER, question)),), metadata=meta)
            yield Answered(sample, row.response())


__all__ = ["PopeVlmEvalKit"]
