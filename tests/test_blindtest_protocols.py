"""BlindTest's three readings of hand-made answers. Each expected verdict is derived from the
reference code: lmms-eval at 75571cf, lmms_eval/tasks/vlmsareblind/utils.py (parse_response
lines 42-75, the comparison lines 84-91, accuracy_by_task lines 96-112); VLMEvalKit at
e8e78f0, vlmeval/dataset/image_mcq.py (VLMBlind.evaluate lines 2570-2611); the paper's
reading is visioneval's (its code is not public), docs/blindtest.md."""

from __future__ import annotations

import pytest

from visioneval.benchmarks.blindtest import protocols
from visioneval.benchmarks.blindtest.metrics import lmms_printed
from visioneval.benchmarks.blindtest.spec import (
    CIRCLED,
    GRID_BLANK,
    LINES,
    OLYMPIC_CIRCLES,
    SUBWAY,
    TOUCHING,
)

# (task, label, answer) -> (paper, lmms-eval, VLMEvalKit) right?
CASES = [
    (TOUCHING, "No", "No", (True, True, True)),
    # lmms-eval line 51: the whole answer must be "yes" or "no".
    (TOUCHING, "No", "No.", (True, False, True)),
    (TOUCHING, "Yes", "Yes, but only barely.", (True, False, True)),
    # VLMEvalKit line 2592: "no" is a substring of "not" and "cannot".
    (TOUCHING, "No", "They do not touch.", (False, False, True)),
    (TOUCHING, "No", "I cannot tell from this image.", (False, False, True)),
    (TOUCHING, "No", "", (False, False, False)),
    # A reasoning model: the paper's reading drops the block; lmms-eval sees the whole text;
    # VLMEvalKit finds "no" inside the block.
    (TOUCHING, "Yes", "<think>do they overlap? no idea</think>Yes", (True, False, True)),
    (TOUCHING, "No", "<think>do they overlap? no idea</think>Yes", (False, False, True)),
    (LINES, "3", "{3}", (True, True, True)),
    # VLMEvalKit lines 2538-2545: no braces, no answer.
    (LINES, "3", "3", (True, True, False)),
    (LINES, "3", "There are 3 intersections.", (False, True, False)),
    # lmms-eval line 55: the first digits anywhere.
    (LINES, "3", "Of the 2 lines I count {3}", (True, False, True)),
    (SUBWAY, "2", "{2}", (True, True, True)),
    # VLMEvalKit lines 2600-2605: the label is a substring of the answer.
    (OLYMPIC_CIRCLES, "1", "{10}", (False, False, True)),
    (OLYMPIC_CIRCLES, "5", "5", (True, True, True)),
    (CIRCLED, "e", "{e}", (True, True, True)),
    # lmms-eval line 60: the first letter anywhere ("t").
    (CIRCLED, "e", "The letter is {e}", (True, False, True)),
    (CIRCLED, "e", "E", (True, True, False)),
    # VLMEvalKit compares the braces' text case-sensitively.
    (CIRCLED, "e", "{E}", (True, True, False)),
    (CIRCLED, "a", "(a)", (False, True, False)),
    (CIRCLED, "e", "I'm sorry, I can't help with that.", (False, False, False)),
    (GRID_BLANK, "5,6", "rows={5} columns={6}", (True, True, True)),
    # lmms-eval line 71: exactly one whitespace between rows={} and columns={}.
    (GRID_BLANK, "5,6", "rows={5}, columns={6}", (True, False, True)),
    (GRID_BLANK, "5,6", "(5, 6)", (True, True, True)),
    # VLMEvalKit lines 2556-2568 need the words or a pair.
    (GRID_BLANK, "5,6", "{5} {6}", (True, True, False)),
    (GRID_BLANK, "5,6", "5 rows and 6 columns", (False, False, False)),
]


@pytest.mark.parametrize(("task", "label", "answer", "expected"), CASES)
def test_each_protocol_reads_the_answer_as_its_code_does(task, label, answer, expected):
    found = tuple(protocols.correct(p, task, protocols.read(p, task, answer), label)
                  for p in ("paper", "lmms-eval", "vlmevalkit"))
    assert found == expected


def test_unread_answers_are_counted_not_hidden():
    assert protocols.unparsed("paper", LINES, protocols.paper_reading(LINES, "many"))
    assert protocols.unparsed("lmms-eval", TOUCHING, protocols.lmms_reading(TOUCHING, "Yes."))
    # VLMEvalKit's substring tasks read every answer: a missing label is just wrong.
    assert not protocols.unparsed("vlmevalkit", TOUCHING, "")


def test_lmms_evals_task_mean_leaves_out_a_task_with_no_right_answer():
    tasks = {"a": {"accuracy": 0.5, "correct": 5}, "b": {"accuracy": 0.3, "correct": 3},
             "c": {"accuracy": 0.0, "correct": 0}}
    printed = lmms_printed(tasks)
    assert printed["dropped"] == ["c"]
    assert printed["lmms_by_task"] == {"a": 0.5, "b": 0.3}
    assert printed["lmms_task_mean"] == pytest.approx(0.4)  # not 0.8 / 3
    assert printed["dropped_points"] == pytest.approx(100 * (0.4 - 0.8 / 3))
    nothing = lmms_printed({"a": {"accuracy": 0.0, "correct": 0}})
    assert "lmms_task_mean" not in nothing and "divides by zero" in \
        nothing["lmms_task_mean_unavailable"]
