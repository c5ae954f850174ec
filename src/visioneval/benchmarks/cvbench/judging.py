"""VLMEvalKit's judge step, opt-in (`--judge-backend`, `--judge-model`): an answer its rules
(`can_infer`) cannot read is given to a judge model, and the judged reading is recorded
beside the rule-based one (score key `vlmevalkit+judge`). An answer the rules read, a letter
or a refusal's Z, is not sent: its judged verdict is its rule verdict.

What VLMEvalKit does ([V] open-compass/VLMEvalKit at e8e78f05): CVBench.evaluate builds the
judge run.py names (gpt-4o-mini by default for a multiple-choice dataset, run.py lines
346-358; image_mcq.py lines 1230-1238) and scores through `mcq_vanilla_eval`
(multiple_choice.py lines 475-507). `extract_answer_from_item` (lines 359-405) gives the
judge `build_prompt` (lines 224-241: two worked examples, then the question with a "?" of
its own, the options as `build_option_str` writes them, vlmeval/smp/vlm.py lines 174-179,
and the answer), one text message, no image; each reply is read by `can_infer`; after three
replies it cannot read, or failed requests, it picks a random one of the option letters and
Z (lines 403-405).

Here a judge request that fails is an error for that item under the judged reading (never a
wrong answer, never a random pick); the rule-based reading is kept. Three replies VLMEvalKit
cannot read give its random pick, seeded by the item so a run repeats it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from visioneval import excerpts as stored
from visioneval.benchmarks.cvbench.protocols import letters
from visioneval.benchmarks.cvbench.spec import JUDGED, VLMEVALKIT, score_key
from visioneval.core.records import GenerationSettings, Request, Sample, user
from visioneval.core.solver import Solved
from visioneval.harness.vlmevalkit import option

if TYPE_CHECKING:
    from visioneval.core.solver import Ask

Score = Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict]]]

TRIES = 3  # multiple_choice.py line 374
RANDOM = "random after three unreadable judge replies"
# VLMEvalKit leaves the reply length to the judge's default; a letter is asked for.
SETTINGS = GenerationSettings(temperature=0.0, max_tokens=64)

# multiple_choice.py lines 225-240, as its code joins the pieces (its wording, its typos).
_TEMPLATE = (
    "You are an AI assistant who will help me to match an answer with several options of a "
    "single-choice question. You are provided with a question, several options, and an "
    "answer, and you need to find which option is most similar to the answer. If the "
    "meaning of all options are significantly different from the answer, output Z. Your "
    "should output a single uppercase character in A, B, C, D (if they are valid options), "
    "and Z. \nExample 1: \nQuestion: What is the main object in image?\nOptions: A. teddy "
    "bear B. rabbit C. cat D. dog\nAnswer: a cute teddy bear\nYour output: A\nExample 2: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat "
    "D. dog\nAnswer: Spider\nYour output: Z\nExample 3: \n")


def matching_prompt(question: str, choices: Sequence[str], answer: str) -> str:
    """`build_prompt(question, build_option_str(choices), answer)`."""
    options = "There are several options: \n" + "".join(
        f"{letter}. {text}\n" for letter, text in zip(letters(choices), choices, strict=True))
    return f"{_TEMPLATE}Question: {question}?\nOptions: {options}\nAnswer: {answer}\n" \
           "Your output: "


@dataclass(frozen=True)
class Verdict:
    """The judge's reading: a letter, Z, or "" when a request failed (`error`)."""

    found: str
    how: str
    replies: tuple[str, ...]
    error: str | None = None


async def read(item: str, question: str, choices: Sequence[str], text: str,
               ask: Ask) -> Verdict:
    """Up to three judge requests, each reply read by `can_infer`; then the random pick."""
    options = dict(zip(letters(choices), choices, strict=True))
    request = Request((user(matching_prompt(question, choices, text)),), SETTINGS)
    replies: list[str] = []
    for _ in range(TRIES):
        # an unreadable reply is not cached, so the next try asks the judge again
        reply = await ask(request, lambda r: option(r.text or "", options) is not None,
                          judge=True)
        if not reply.ok:
            return Verdict("", "judge request failed", tuple(replies),
                           f"judge: {reply.error}"[:500])
        replies.append(stored.excerpt(reply.text or ""))
        found = option(reply.text or "", options)
        if found:
            return Verdict(found, "judge", tuple(replies))
    pick = random.Random(f"vlmevalkit/{item}").choice([*options, "Z"])
    return Verdict(pick, RANDOM, tuple(replies))


@dataclass(frozen=True)
class Judged:
    """The solver: the model's answer scored by rule, then VLMEvalKit's judge on an answer
    to VLMEvalKit's prompt that its rules leave unread."""

    score: Score
    label_sets: tuple[str, ...]

    async def solve(self, sample: Sample, ask: Ask) -> Solved:
        answer = await ask(Request(sample.messages, ask.settings))
        if not answer.ok:
            return Solved(answer)
        text = answer.text or ""
        parsed, scores = self.score(sample, text)
        meta = sample.metadata
        if meta.get("protocol") != VLMEVALKIT:
            return Solved(answer, parsed, scores)
        choices = [str(c) for c in meta["choices"]]
        if option(text, dict(zip(letters(choices), choices, strict=True))):
            for label_set in self.label_sets:  # read by rule: the judge is not asked
                rule = score_key(VLMEVALKIT, label_set)
                parsed[score_key(JUDGED, label_set)] = parsed.get(rule, "")
                scores[score_key(JUDGED, label_set)] = dict(scores[rule])
            return Solved(answer, parsed, scores)
        verdict = await read(str(meta["item"]), str(meta.get("question") or ""), choices,
                             text, ask)
        parsed[f"{JUDGED} reading"] = {"how": verdict.how, "replies": list(verdict.replies)}
        if verdict.error is not None:
            parsed[f"{JUDGED} reading"]["error"] = verdict.error
            return Solved(answer, parsed, scores)
        for label_set in self.label_sets:
            key = score_key(JUDGED, label_set)
            parsed[key] = verdict.found if verdict.found in letters(choices) else ""
            gold = str(sample.target[label_set])
            scores[key] = {"correct": float(verdict.found == gold)}
        return Solved(answer, parsed, scores)
