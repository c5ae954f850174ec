"""The opt-in judge step (`--judge-backend`, `--judge-model`): the answers a protocol's rules
leave unread are given to a judge model with that protocol's own matching prompt, and the
judged reading is recorded beside the rule-based one (score keys `paper+judge`,
`vlmevalkit+judge`). An answer the rules read is not sent to the judge: its judged verdict
is its rule verdict.

- The paper ([P] zeyofu/BLINK_Benchmark at 2d6a779, eval/test_benchmark.py lines 31-35 and
  eval/multiple_choice.py lines 9-55): when `analyze_answer` finds no single option token,
  gpt-3.5-turbo gets `build_prompt` (multiple_choice.py lines 21-35) at temperature 0, one
  user message, with the question as "<question>\\nSelect from the following choices" and
  the options as "(A) ...\\n(B) ..."; its reply, verbatim, is the prediction, right only
  when it equals the label ("(B)") exactly (eval/evaluate.py line 53). The paper retries
  only a request that raised (10 times), then records "(Z) Failed to get multiple choice".
- VLMEvalKit ([V] open-compass/VLMEvalKit at e8e78f05, vlmeval/dataset/utils/
  multiple_choice.py lines 271-302 and 359-405): when `can_infer` reads nothing, its judge
  (gpt-4o-mini by default, run.py lines 346-358) gets `build_prompt_blink`, a port of the
  paper's template with its "(Z) Failed" line, the options as `build_option_str` writes
  them (vlmeval/smp/vlm.py lines 174-179: "There are several options: \\n" then "A. ...\\n");
  each reply is read by `can_infer`; after three replies it cannot read (or failed
  requests) it picks a random one of the option letters and Z (lines 403-405).

Here a judge request that fails is an error for that question under the judged reading
(never a wrong answer, never a random pick); the rule-based reading is kept. Three replies
VLMEvalKit cannot read give its random pick, seeded by the question so a run repeats it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from visioneval import excerpts as stored
from visioneval.benchmarks.blink import readings
from visioneval.benchmarks.blink.questions import Question
from visioneval.benchmarks.blink.spec import CORRECTED, JUDGED_PROTOCOLS, judged, score_key
from visioneval.core.records import GenerationSettings, Request, Sample, user
from visioneval.core.solver import Solved
from visioneval.harness.vlmevalkit import option

if TYPE_CHECKING:
    from visioneval.core.solver import Ask

Score = Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict]]]

VLMEVALKIT_TRIES = 3  # multiple_choice.py line 374
# Neither reference sets a reply length; an option token is asked for.
PAPER_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=64)  # multiple_choice.py:50
VLMEVALKIT_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=64)

# The grading template's shared part (the worked examples), as both references give it.
_EXAMPLE_3_ANSWER = (
    "The reference point (REF) on the first image is at the tip of the pot, which is the "
    "part used to Poke if the pots were used for that action. Looking at the second image, "
    "we need to find the part of the object that would correspond to poking.\n"
    "(A) Point A is at the tip of the spoon's handle, which is not used for poking.\n"
    "(B) Point B is at the bottom of the spoon, which is not used for poking.\n"
    "(C) Point C is on the side of the pspoonot, which is not used for poking.\n"
    "(D) Point D is at the tip of the spoon, which is not used for poking.\n"
    "\nTherefore, there is no correct answer in the choices")
_INTRO = ("You are an AI assistant who will help me to match an answer with several options "
          "of a single-choice question. You are provided with a question, several options, "
          "and an answer, and you need to find which option is most similar to the answer. ")
_CLOSER = "Which point is closer to the camera?\nSelect from the following choices.\n"
_REFERENCE = ("Which point is corresponding to the reference point?\nSelect from the "
              "following choices.\n")
_SORRY = "I'm sorry, but I can't assist with that request."
_CHILD = "Point B, where the child is sitting, is closer to the camera."


def _examples(first_options: str, bracket: Callable[[str], str]) -> str:
    """The three worked examples; `first_options`: how example 1 lists its options (the
    port writes "A. Point A", the paper "(A) Point A"); `bracket`: how an output is shown."""
    shown = "(A) Point A\n(B) Point B\n(Z) Failed\n"
    return (f"Example 1: \nQuestion: {_CLOSER}Options: {first_options}"
            f"Answer: {_CHILD}\nYour output: {bracket('B')}\n"
            f"Example 2: \nQuestion: {_CLOSER}Options: {shown}"
            f"Answer: {_SORRY}\nYour output: {bracket('Z')}\n"
            f"Example 3: \nQuestion: {_REFERENCE}Options: {shown}"
            f"Answer:{_EXAMPLE_3_ANSWER}\nYour output: {bracket('Z')}\n")


def paper_prompt(q: Question, answer: str) -> str:
    """[P] multiple_choice.py lines 21-35 as the paper fills it (test_benchmark.py lines
    32-34). The string pieces are joined without spaces there: "output (Z)If", "(Z)Your"."""
    options = "\n".join(f"({letter}) {text}" for letter, text in
                        zip(q.letters, q.choices, strict=True))
    return (_INTRO + "If the answer says things like refuse to answer, I'm sorry cannot "
            "help, etc., output (Z)If the meaning of all options are significantly "
            "different from the answer, or the answer does not select any option, output "
            "(Z)Your should output one of the choices, (A),(B),(C),(D),(E) (if they are "
            "valid options), or (Z)\n"
            + _examples("(A) Point A\n(B) Point B\n(Z) Failed\n", lambda x: f"({x})")
            + f"Example 4: \nQuestion: {q.question}\nSelect from the following choices?\n"
              f"Options: {options}\n(Z) Failed\nAnswer: {answer}\nYour output: ")


def vlmevalkit_prompt(q: Question, answer: str) -> str:
    """[V] `build_prompt_blink` (multiple_choice.py lines 271-302) with `build_option_str`'s
    options (vlm.py lines 174-179). "output Z." runs into "If" there too."""
    options = "There are several options: \n" + "".join(
        f"{letter}. {text}\n" for letter, text in zip(q.letters, q.choices, strict=True))
    return (_INTRO + "If the answer says things like refuse to answer, I'm sorry cannot "
            "help, etc., output Z.If the meaning of all options are significantly "
            "different from the answer, or the answer does not select any option, output Z. "
            "Your should output one of the choices, A, B, C, D (if they are valid options), "
            "or Z.\n"
            + _examples("A. Point A\nB. Point B\n(Z) Failed\n", lambda x: f"({x})")
            + f"Example 4: \nQuestion: {q.question}?\nOptions: {options}\n(Z) Failed\n"
              f"Answer: {answer}\nYour output: ")


@dataclass(frozen=True)
class Verdict:
    """The judged reading of one answer: the option it names ("" for none), how it was
    reached, the judge's replies, and the error when a judge request failed."""

    found: str
    how: str
    replies: tuple[str, ...] = ()
    error: str | None = None


async def ask_paper(q: Question, text: str, ask: Ask) -> Verdict:
    """One request; the reply is the prediction as it stands."""
    reply = await ask(Request((user(paper_prompt(q, text)),), PAPER_SETTINGS), judge=True)
    if not reply.ok:
        return Verdict("", "judge request failed", (), f"judge: {reply.error}"[:500])
    said = reply.text or ""
    tokens = [f"({letter})" for letter in q.letters]
    return Verdict(said if said in tokens else "", "judge", (stored.excerpt(said),))


async def ask_vlmevalkit(q: Question, text: str, ask: Ask) -> Verdict:
    """Up to three requests, each reply read by `can_infer`; then the random pick."""
    choices = dict(zip(q.letters, q.choices, strict=True))
    request = Request((user(vlmevalkit_prompt(q, text)),), VLMEVALKIT_SETTINGS)
    replies: list[str] = []
    for _ in range(VLMEVALKIT_TRIES):
        # an unreadable reply is not cached, so the next try asks the judge again
        reply = await ask(request, lambda r: option(r.text or "", choices) is not None,
                          judge=True)
        if not reply.ok:
            return Verdict("", "judge request failed", tuple(replies),
                           f"judge: {reply.error}"[:500])
        replies.append(stored.excerpt(reply.text or ""))
        found = option(reply.text or "", choices)
        if found:
            return Verdict(found, "judge", tuple(replies))
    pick = random.Random(f"vlmevalkit/{q.idx}").choice([*q.letters, "Z"])
    return Verdict(pick, RANDOM, tuple(replies))


RANDOM = "random after three unreadable judge replies"


@dataclass(frozen=True)
class Judged:
    """The solver: the model's answer, scored by rule; then, for the answers to a judged
    protocol's prompt that its rules leave unread, that protocol's judge."""

    score: Score
    question_of: Callable[[Sample], Question]

    async def solve(self, sample: Sample, ask: Ask) -> Solved:
        answer = await ask(Request(sample.messages, ask.settings))
        if not answer.ok:
            return Solved(answer)
        text = answer.text or ""
        parsed, scores = self.score(sample, text)
        protocol = str(sample.metadata.get("prompt"))
        if protocol not in JUDGED_PROTOCOLS:
            return Solved(answer, parsed, scores)
        q = self.question_of(sample)
        corrected = str(sample.metadata["corrected"])
        if protocol == "paper":
            unread = not parsed.get("paper")
            verdict = await ask_paper(q, text, ask) if unread else None
            right = {"original": q.answer, CORRECTED: corrected}
        else:
            unread = not readings.vlmevalkit(text, q)
            verdict = await ask_vlmevalkit(q, text, ask) if unread else None
            right = {"original": q.letter, CORRECTED: corrected.strip("()")}
        key = judged(protocol)
        if verdict is None:  # the rules read it: the judge is not asked
            parsed[key] = parsed.get(protocol, "")
            for label_set in right:
                rule = scores.get(score_key(protocol, label_set))
                if rule is not None:
                    scores[score_key(key, label_set)] = {"correct": rule["correct"]}
            return Solved(answer, parsed, scores)
        parsed[key] = verdict.found
        parsed[f"{key} reading"] = {"how": verdict.how, "replies": list(verdict.replies)}
        if verdict.error is not None:
            parsed[f"{key} reading"]["error"] = verdict.error
            return Solved(answer, parsed, scores)
        for label_set, label in right.items():  # the paper: the reply equals the label
            scores[score_key(key, label_set)] = {"correct": float(verdict.found == label)}
        return Solved(answer, parsed, scores)
