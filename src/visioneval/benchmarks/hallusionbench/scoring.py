"""One answer scored under every protocol that reads it, and under each label set asked.

All three protocols send the same prompt (the question, after the figure when there is one:
[P] the question alone; [L] evaluate_hb.py:22-27 with an empty pre- and post-prompt; [V]
image_base.py:320-337), so one answer serves them all. A record's `scores` holds, per
protocol, its verdict under the first label set (`paper` also the counterfactual keys of
`harness.differences`, and `code`, the grader's 0/1/2), and under the corrected labels
`"<protocol> (corrected)"` where a correction changes the item's labels. `parsed` holds each
protocol's reading (Yes, No, Unknown; or the grader's correct, incorrect, unclear) and
`yes_no`, the answer's Yes/No word whatever the grader said (for the yes/no bias)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from visioneval.benchmarks.hallusionbench import rules
from visioneval.benchmarks.hallusionbench.items import Item
from visioneval.benchmarks.hallusionbench.spec import IMAGE_ONLY, REFERENCE
from visioneval.harness.differences import Counterfactual, reference_block

GRADER_WORDS = {rules.INCORRECT: "incorrect", rules.CORRECT: "correct",
                rules.UNCLEAR: "unclear"}
CORRECTED = " (corrected)"


@dataclass(frozen=True)
class Verdicts:
    """What the opt-in judge steps said of one answer under one label set (None: not
    asked): the paper's grader's code, and VLMEvalKit's judge's Yes/No/Unknown (asked only
    when its rule read Unknown)."""

    grader: int | None = None
    matcher: str | None = None


NO_JUDGE = Verdicts()


def takes(protocol: str, item: Item) -> bool:
    """Whether a protocol scores the item: the harnesses ask only questions with a figure."""
    return item.has_image or protocol not in IMAGE_ONLY


def reading(protocol: str, item: Item, text: str, verdicts: Verdicts) -> tuple[str, float]:
    """(what the protocol read, whether it is correct) for one answer."""
    extracted: str = rules.yes_no(text)
    if protocol == "vlmevalkit":
        if extracted == "Unknown" and verdicts.matcher is not None:
            extracted = verdicts.matcher
        return extracted, float(rules.vlmevalkit_correct(extracted, item.gt_answer))
    # The paper and lmms-eval: the same grader and the same `assign_correctness`.
    if verdicts.grader is None:
        code = rules.rule_code(extracted, item.gt_answer)
        said = extracted
    else:
        code, said = verdicts.grader, GRADER_WORDS[verdicts.grader]
    return said, float(rules.paper_correct(code, item.no_figure))


def grader_code(item: Item, text: str, verdicts: Verdicts) -> int:
    if verdicts.grader is not None:
        return verdicts.grader
    return rules.rule_code(rules.yes_no(text), item.gt_answer)


def score(items: Mapping[str, Item], text: str, protocols: Sequence[str],
          verdicts: Mapping[str, Verdicts]) -> tuple[dict[str, Any], dict[str, dict]]:
    """(parsed, scores) of one answer; `items`: the item under each label set asked, the
    first the one every protocol's own key reads."""
    sets = list(items)
    first = items[sets[0]]
    parsed: dict[str, Any] = {"yes_no": rules.yes_no(text)}
    scores: dict[str, dict] = {}
    for protocol in protocols:
        if not takes(protocol, first):
            continue
        said, correct = reading(protocol, first, text, verdicts.get(sets[0], NO_JUDGE))
        parsed[protocol] = said
        if protocol == REFERENCE:
            others = {p: Counterfactual(excluded=not takes(p, first))
                      for p in protocols if p != REFERENCE}
            block = reference_block(correct, others)
            block["code"] = float(grader_code(first, text, verdicts.get(sets[0], NO_JUDGE)))
            scores[protocol] = block
        else:
            scores[protocol] = {"correct": correct}
        for label_set in sets[1:]:
            other = items[label_set]
            if (other.gt_answer, other.gt_answer_details) == \
                    (first.gt_answer, first.gt_answer_details):
                continue  # no correction of this item: the same verdict
            said, correct = reading(protocol, other, text, verdicts.get(label_set, NO_JUDGE))
            scores[f"{protocol}{CORRECTED}"] = {"correct": correct}
            parsed[f"{protocol}{CORRECTED}"] = said
    return parsed, scores
