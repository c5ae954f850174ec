"""VLMEvalKit's judge step, opt-in (`--judge-backend`, `--judge-model`): an answer its rules
read as Unknown is given to a judge model, which says which of Yes and No it means.

What VLMEvalKit does ([V] vlmeval/dataset/image_yorn.py lines 52-84, utils/yorn.py
`YOrN_match_prompt` lines 235-251 and `YOrN_auxeval` lines 264-272): the judge (gpt-4o-mini
by default, when an OpenAI key works) gets a text prompt, no image, that shows two worked
examples and then the question (followed by a "?" of its own) and the answer; its reply is
read with the same rule (`YOrN_Extraction`); up to five tries, at temperature 0, 0.5, 1.0,
1.5 and 2.0, until the reading is Yes or No, else it stays Unknown. Only the VLMEvalKit
protocol uses the judge's reading: the paper's rule reads the model's answer as always.

A judge request that fails is not a reading: the question is left out of VLMEvalKit's
metrics (counted in its errors) and the paper's reading of the answer is kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.pope import protocols
from visioneval.benchmarks.pope.options import PopeOptions
from visioneval.benchmarks.pope.spec import JUDGE_ERROR, JUDGED, PAPER, RULE, VLMEVALKIT
from visioneval.core.records import GenerationSettings, Request, Sample, user
from visioneval.core.solver import Solved

if TYPE_CHECKING:
    from visioneval.core.solver import Ask, Solver

Score = Callable[[Sample, str], tuple[dict[str, Any], dict[str, dict[str, float]]]]
"""The benchmark's `score`: every protocol of the run on one answer."""

TRIES = 5  # yorn.py line 266
# VLMEvalKit leaves the judge's reply length to the judge's default; a word is asked for.
JUDGE_MAX_TOKENS = 16

# yorn.py lines 237-250, the prompt VLMEvalKit's judge reads, as its code joins it.
MATCH_PROMPT = (
    "You are an AI assistant who will help me to match an answer with two options of a "
    "question. The options are only Yes / No. You are provided with a question and an "
    "answer, and you need to find which option (Yes / No) is most similar to the answer. "
    "If the meaning of all options are significantly different from the answer, output "
    "Unknown. Your should output a single word among the following 3 choices: Yes, No, "
    "Unknown.\nExample 1: \nQuestion: Is the word in this image 'Hello'?\nAnswer: The word "
    "in this image is 'Hello'.\nYour output: Yes\nExample 2: \nQuestion: Is the word in "
    "this image 'Hello'?\nAnswer: The word in this image is not 'Hello'.\nYour output: "
    "No\nExample 3: \nQuestion: {question}?\nAnswer: {answer}\nYour output: ")


def match_prompt(question: str, answer: str) -> str:
    """The judge's prompt for one question and answer (the question's own "?" stays, and
    VLMEvalKit adds another)."""
    return MATCH_PROMPT.format(question=question, answer=answer)


@dataclass(frozen=True)
class Judge:
    spec: BackendSpec

    @classmethod
    def for_options(cls, options: PopeOptions) -> Judge | None:
        if options.judge_backend is None or options.judge_model is None:
            return None
        return cls(BackendSpec(kind=options.judge_backend, model=options.judge_model,
                               base_url=options.judge_base_url,
                               api_key_env=options.judge_api_key_env))

    def solver(self, score: Score) -> Solver:
        """The model's answer, scored by `score`, then the judge on an Unknown reading."""
        async def solve(sample: Sample, ask: Ask) -> Solved:
            answer = await ask(Request(sample.messages, ask.settings))
            if not answer.ok or sample.metadata.get("family") != PAPER:
                return Solved(answer)
            parsed, scores = score(sample, answer.text or "")
            if parsed.get(VLMEVALKIT) != "Unknown":
                return Solved(answer, parsed, scores)
            read, error = await self.read(str(sample.metadata.get("question", "")),
                                          answer.text or "", ask)
            return Solved(answer, *judged(parsed, scores, read, error,
                                          sample.target["answer"]))
        return solve

    async def read(self, question: str, answer: str, ask: Ask) -> tuple[str, str | None]:
        """(the judge's reading, or Unknown after five tries; why no reading came back)."""
        prompt = (user(match_prompt(question, answer)),)
        for i in range(TRIES):
            settings = GenerationSettings(temperature=0.5 * i, max_tokens=JUDGE_MAX_TOKENS)
            reply = await ask(Request(prompt, settings), judge=True)
            if not reply.ok:
                return "Unknown", f"judge: {reply.error}"[:500]
            reading = protocols.vlmevalkit_reading(reply.text or "")
            if reading != "Unknown":
                return reading, None
        return "Unknown", None


def judged(parsed: dict[str, Any], scores: dict[str, dict[str, float]], reading: str,
           error: str | None, label: str) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """The record's readings and verdicts once the judge has read an Unknown answer (or
    failed to: then VLMEvalKit has no verdict for it)."""
    parsed, scores = dict(parsed), dict(scores)
    parsed[RULE] = parsed.get(VLMEVALKIT)
    if error is not None:
        parsed[JUDGE_ERROR] = error
        scores.pop(VLMEVALKIT, None)
        return parsed, scores
    parsed[JUDGED] = parsed[VLMEVALKIT] = reading
    scores[VLMEVALKIT] = {"correct": float(protocols.correct(VLMEVALKIT, reading, label))}
    return parsed, scores
