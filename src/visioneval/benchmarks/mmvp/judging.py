"""The opt-in judges (`--judge-backend`, `--judge-model`): the two model readings the
references use where visioneval reads by rule.

- The paper's grader ([P] scripts/gpt_grader.py lines 19-46, 56): GPT-4-0314 at temperature
  0.2 with the system prompt below, asked per answer "Given the following question {Question
  + " " + Options}, the correct answer is {(a) or (b)}. Does the following answer correctly
  answers the question, answer:{answer}?"; a reply that is "yes" or "no" (any case, nothing
  else) is the verdict, any other counts as not correct ("Could not determine yes or no.").
  The judge is asked once per label the run needs (the published one, lmms-eval's and the
  corrected one where they differ), so each label set gets the grader's own verdict.
- VLMEvalKit's fallback (vlmeval/dataset/utils/multiple_choice.py lines 224-241, 374-405):
  when `can_infer` reads nothing, its judge (gpt-4o-mini by default) is asked to match the
  answer with the options ("... output Z ..."), up to three times, each reply read by
  `can_infer`; after three replies it cannot read, a random one of A, B and Z (here seeded by
  the question, so a run gives the same pick again).

A judge request that fails makes the sample an error (retried on --resume, the model's answer
then coming from the cache), never a wrong answer."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from visioneval import excerpts as stored
from visioneval.benchmarks.mmvp import prompts
from visioneval.benchmarks.mmvp.labels import Labels
from visioneval.benchmarks.mmvp.questions import Question
from visioneval.benchmarks.mmvp.spec import UNDETERMINED
from visioneval.core.records import GenerationSettings, Message, Request, Response, Sample
from visioneval.core.solver import Solved
from visioneval.harness.vlmevalkit import option

if TYPE_CHECKING:
    from collections.abc import Callable

    from visioneval.core.solver import Ask

GRADER_SYSTEM = ("You are a helpful and precise assistant for checking the quality of the "
                 "answer. Please answer in only yes or no.")
GRADER_SETTINGS = GenerationSettings(temperature=0.2, max_tokens=64)
VLMEVALKIT_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=64)
VLMEVALKIT_TRIES = 3
_YES_NO = re.compile(r"^(yes|no)$", re.IGNORECASE)

# VLMEvalKit's matching prompt, multiple_choice.py lines 224-241 (its text, its typos).
VLMEVALKIT_MATCHING = (
    "You are an AI assistant who will help me to match an answer with several options of a "
    "single-choice question. You are provided with a question, several options, and an "
    "answer, and you need to find which option is most similar to the answer. If the meaning "
    "of all options are significantly different from the answer, output Z. Your should "
    "output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
    "Example 1: \nQuestion: What is the main object in image?\nOptions: A. teddy bear B. "
    "rabbit C. cat D. dog\nAnswer: a cute teddy bear\nYour output: A\nExample 2: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. "
    "dog\nAnswer: Spider\nYour output: Z\nExample 3: \n"
    "Question: {}?\nOptions: {}\nAnswer: {}\nYour output: ")


def grader_request(q: Question, label: str, answer: str) -> Request:
    """The paper's grader asked about one answer, the correct answer being `label` ("a")."""
    text = (f"Given the following question {prompts.paper(q)}, the correct answer is "
            f"({label}). Does the following answer correctly answers the question, "
            f"answer:{answer}?")
    return Request((Message("system", (GRADER_SYSTEM,)), Message("user", (text,))),
                   GRADER_SETTINGS)


def grader_verdict(reply: str) -> str:
    """ "yes", "no", or the paper's UNDETERMINED (counted as not correct)."""
    match = _YES_NO.match(reply)
    return match.group(1).lower() if match else UNDETERMINED


def vlmevalkit_request(q: Question, answer: str) -> Request:
    """VLMEvalKit's matching prompt, its options as `build_option_str` writes them
    (vlmeval/smp/vlm.py lines 174-179, called by multiple_choice.py line 362): "There are
    several options: \\n" then "A. x\\nB. y\\n"."""
    first, second = q.choices
    options = f"There are several options: \nA. {first}\nB. {second}\n"
    return Request((Message("user", (VLMEVALKIT_MATCHING.format(q.question, options,
                                                                 answer),)),),
                   VLMEVALKIT_SETTINGS)


@dataclass(frozen=True)
class Judged:
    """How the judges answer a sample: the benchmark's rule-based scoring first, then the
    judge's reading where the references used one."""

    score: Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict]]]
    question_of: Callable[[Sample], Question]
    labels_of: Callable[[Sample], Labels]
    protocols: tuple[str, ...]
    corrected: bool

    async def solve(self, sample: Sample, ask: Ask) -> Solved:
        answer = await ask(Request(sample.messages, ask.settings))
        if not answer.ok:
            return Solved(answer)
        text = answer.text or ""
        parsed, scores = self.score(sample, text)
        prompt = sample.metadata.get("prompt")
        if prompt == "paper":
            failed = await self._grade(sample, text, ask, parsed, scores)
        elif prompt == "vlmevalkit" and not parsed.get("vlmevalkit"):
            failed = await self._match(sample, text, ask, parsed, scores)
        else:
            failed = None
        if failed is not None:
            return Solved(answer.model_copy(update={"text": None,
                                                    "error": f"judge: {failed}"[:500]}),
                          parsed | {"answer": stored.excerpt(text)}, {})
        return Solved(answer, parsed, scores)

    async def _grade(self, sample: Sample, text: str, ask: Ask, parsed: dict[str, Any],
                     scores: dict[str, dict]) -> str | None:
        q, labels = self.question_of(sample), self.labels_of(sample)
        wanted = {labels.published}
        if "lmms-eval" in self.protocols:
            wanted.add(labels.lmms_eval)
        if self.corrected:
            wanted.add(labels.corrected)
        verdicts = {}
        for label in sorted(wanted):
            reply = await ask(grader_request(q, label, text), judge=True)
            if not reply.ok:
                return reply.error or "no reply"
            verdicts[label] = grader_verdict(reply.text or "")
        parsed["paper_rule"] = parsed.get("paper", "")
        parsed["paper_grader"] = {f"({k})": v for k, v in verdicts.items()}
        block = scores["paper"]
        block["correct"] = float(verdicts[labels.published] == "yes")
        if "lmms-eval|label set" in block:
            block["lmms-eval|label set"] = float(verdicts[labels.lmms_eval] == "yes")
        if labels.corrected in verdicts:
            scores["paper/corrected"] = {"correct": float(verdicts[labels.corrected] == "yes")}
        return None

    async def _match(self, sample: Sample, text: str, ask: Ask, parsed: dict[str, Any],
                     scores: dict[str, dict]) -> str | None:
        q, labels = self.question_of(sample), self.labels_of(sample)
        first, second = q.choices
        found: str | None = None
        replies = []
        for _ in range(VLMEVALKIT_TRIES):
            # an unreadable reply is not cached, so the next try asks the judge again
            reply: Response = await ask(
                vlmevalkit_request(q, text),
                lambda r: option(r.text or "", {"A": first, "B": second}) is not None,
                judge=True)
            if not reply.ok:
                return reply.error or "no reply"
            replies.append(stored.excerpt(reply.text or ""))
            found = option(reply.text or "", {"A": first, "B": second})
            if found:
                break
        how = "judge"
        if not found:
            found = random.Random(f"vlmevalkit/{q.index}").choice(["A", "B", "Z"])
            how = "random after three unreadable judge replies"
        parsed["vlmevalkit"] = found
        parsed["vlmevalkit_judge"] = {"replies": replies, "how": how}
        for key, label in (("vlmevalkit", labels.published),
                           ("vlmevalkit/corrected", labels.corrected)):
            scores[key] = {"correct": float(found == label.upper())}
        return None
