"""NaturalBench answers in VLMEvalKit's prediction file (`<model>_NaturalBenchDataset.xlsx|
tsv|json`), as visioneval's own NaturalBench run records them, scored under every protocol
that sends VLMEvalKit's prompt: the question, a space and the suffix ([V] image_mcq.py
`NaturalBenchDataset.build_prompt`), which lmms-eval sends too (family "spaced").

A row of VLMEvalKit's NaturalBenchDataset.tsv holds `index`, `question`, `type` (yes_no or
multiple_choice) and `answer`; VLMEvalKit sorts the rows by index and takes rows 4i to 4i + 3
as group i's q0_i0, q0_i1, q1_i0, q1_i1 (`evaluate`), so index i is item i % 4 of group
i // 4, as in lmms-eval's copy. Both label sets are scored: the fixed layout and the row's
`answer` column."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from visioneval.benchmarks.naturalbench import protocols
from visioneval.benchmarks.naturalbench.benchmark import scoring_only
from visioneval.benchmarks.naturalbench.lmms_eval import RESCORED
from visioneval.benchmarks.naturalbench.options import NaturalBenchOptions
from visioneval.benchmarks.naturalbench.spec import (
    FIXED_LAYOUT,
    ITEM_NAMES,
    LABELS,
    QUESTION_TYPES,
)
from visioneval.core.foreign import Answered, Item, LogFile, RescoreRequest, Source
from visioneval.core.records import Sample, SkippedRow, user
from visioneval.foreign import vlmevalkit
from visioneval.io.lines import BadLines

DATASETS = {"NaturalBenchDataset": "naturalbench"}
FAMILY = "spaced"


class Checks(vlmevalkit.Checks):
    def __init__(self) -> None:
        self.no_answer_column = 0

    def as_dict(self) -> dict[str, Any]:
        return {"checks": {"rows_without_answer": self.no_answer_column}}

    def notes(self) -> list[str]:
        return [vlmevalkit.PROMPT_NOTE] + self.counted(
            (self.no_answer_column, "rows have no Yes/No or A/B answer: scored by the fixed "
                                    "layout only"))


class NaturalBenchVlmEvalKit(vlmevalkit.Reader):
    """The reader of VLMEvalKit's NaturalBenchDataset prediction files."""

    datasets = DATASETS

    def read(self, logs: Sequence[LogFile], request: RescoreRequest,
             bad: BadLines) -> Source:
        found = vlmevalkit.provenance(logs, request)
        options = NaturalBenchOptions(protocol="harnesses", labels="both")
        checks = Checks()
        return Source(
            benchmark=scoring_only(options), definition=RESCORED,
            options=options.model_dump(),
            dataset={"source": "VLMEvalKit prediction files (NaturalBenchDataset.tsv's rows; "
                               "labels: the fixed layout and the rows' answer column)",
                     "files": {"naturalbench": [f.path.name for f in logs]}},
            generation=found.generation, model=found.model, tool_run=found.tool_run,
            items=self._items(logs, bad, checks), checks=checks.as_dict, notes=checks.notes)

    def _items(self, logs: Sequence[LogFile], bad: BadLines, checks: Checks
               ) -> Iterator[Item]:
        for log_file in logs:
            for row in vlmevalkit.read(log_file, bad):
                yield self._item(row, checks)

    def _item(self, row: vlmevalkit.Row, checks: Checks) -> Item:
        raw, qtype = row.get("index").strip(), row.get("type").strip()
        if not raw.isdigit():
            return SkippedRow("naturalbench", row.where, f"index {raw!r} is not a whole "
                                                         "number")
        if qtype not in QUESTION_TYPES:
            return SkippedRow("naturalbench", row.where, f"type {qtype!r} is not one of "
                                                         f"{', '.join(QUESTION_TYPES)}")
        index = int(raw)
        group, position = f"{index // 4:04d}", ITEM_NAMES[index % 4]
        column = protocols.read_label(row.get("answer"), qtype)
        checks.no_answer_column += column is None
        target = {"original": LABELS[qtype][FIXED_LAYOUT[position]],
                  "corrected": None if column is None else LABELS[qtype][column]}
        meta = {"group_id": group, "row": index // 4, "type": qtype, "index": index,
                "item": f"{group}/{position}", "position": position, "family": FAMILY,
                "vlmevalkit": checks.where(row)}
        sample = Sample(id=f"{group}/{position}/{FAMILY}", group=qtype, target=target,
                        messages=(user(protocols.prompt(row.get("question"), qtype,
                                                        FAMILY)),),
                        metadata=meta)
        return Answered(sample, row.response())


__all__ = ["NaturalBenchVlmEvalKit"]
