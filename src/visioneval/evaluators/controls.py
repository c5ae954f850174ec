"""Checks of a rubric judge as requests beside its own (`--judge-controls`): the same case
without its images (does the judge look?), with its images in the other order (does the
place of an image change the score?), and with the candidate's output edited in a known way
(does the judge notice a hallucination it is asked to list?).

Each control is one more sample of the run, answered by the same judge with the same
settings, so it is cached, retried, resumed, sharded and priced as every sample is."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.core.records import GenerationSettings, Message, Request
from visioneval.evaluators.edits import KINDS, Edit, make_edit
from visioneval.evaluators.judge import Case, judge_request
from visioneval.evaluators.options import Control
from visioneval.evaluators.rubric import Rubric

BLIND = "blind"
ORDER = "order"
EDIT = "edit:"  # an edit's control is named edit:<kind>
SEPARATOR = "+"  # a control's sample id: <judge sample id>+<control>


@dataclass(frozen=True)
class ControlRequest:
    """One control of one judge sample: its name, the request, and the edit it made."""

    name: str
    request: Request
    edit: Edit | None = None

    def metadata(self) -> dict[str, Any]:
        """The edit as the record keeps it (its text is in the record's prompt already)."""
        if self.edit is None:
            return {}
        return {"edit": {k: v for k, v in self.edit.as_dict().items() if k != "output"}}


def without_images(request: Request) -> Request:
    """The request with every image part removed and its text unchanged (the "Image k:"
    labels stay): the only difference from the judge's request is the pixels."""
    return Request(tuple(Message(m.role, tuple(p for p in m.parts if isinstance(p, str)))
                         for m in request.messages), request.settings)


def planned(controls: Sequence[Control], rubric: Rubric, case: Case
            ) -> Iterator[tuple[str, Edit | None]]:
    """The controls that apply to this case, by name (and an edit's edit): blind with at
    least one image, order with two or more, and one edit per kind whose rule applies to the
    output and whose detail list the rubric asks for (`details.hallucinations`,
    `details.missing_elements`). Counting them renders no request."""
    if BLIND in controls and case.images:
        yield BLIND, None
    if ORDER in controls and len(case.images) >= 2:
        yield ORDER, None
    if "probes" in controls:
        for kind in KINDS:
            edit = make_edit(kind, case.output, case.expected_output, case.input)
            if edit is not None and edit.detail in rubric.details:
                yield EDIT + kind, edit


def control_requests(controls: Sequence[Control], rubric: Rubric, case: Case,
                     settings: GenerationSettings) -> Iterator[ControlRequest]:
    """Each planned control's request."""
    for name, edit in planned(controls, rubric, case):
        if name == BLIND:
            request = without_images(judge_request(rubric, case, settings))
        elif name == ORDER:
            order = list(reversed(range(len(case.images))))
            request = judge_request(rubric, case, settings, order)
        else:
            assert edit is not None
            request = judge_request(rubric, dataclasses.replace(case, output=edit.output),
                                    settings)
        yield ControlRequest(name, request, edit)


def control_id(sample_id: str, control: str) -> str:
    return f"{sample_id}{SEPARATOR}{control}"


def control_group(group: str, control: str) -> str:
    return f"{group} [{control}]"
