"""The opt-in judge steps: the paper's grader (`--judge-model`; GPT-4 in the paper) and
VLMEvalKit's Yes/No matcher (`--vlmevalkit-judge-model`; gpt-4o-mini there).

The model answers first; then the grader reads the question, the detailed answer and the
model's answer (`rules.judge_prompt`) and its reply becomes the paper's code 0/1/2, which
the paper's and lmms-eval's protocols read; and, only for an answer VLMEvalKit's rule reads
as Unknown, the matcher is asked `rules.match_prompt` up to 5 times, at temperature 0, 0.5,
1, 1.5, 2, until its reply reads Yes or No ([V] yorn.py:264-272). The grader is asked at
temperature 0 with at most 16 tokens (lmms-eval's cap, [L] utils.py:51; the paper set
neither, so its GPT-4 sampled at the API's default), so a verdict is reproducible and
cached. Under corrected labels whose detailed answer differs, the grader is asked again.

A judge request that fails, or a grader reply with no text, makes the sample an error
(retried on --resume, the answer then coming from the cache), never a wrong answer: the
paper's code retries forever, lmms-eval counts it wrong (docs/hallusionbench.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from visioneval import excerpts as stored
from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.hallusionbench import rules, scoring
from visioneval.benchmarks.hallusionbench.options import HallusionBenchOptions
from visioneval.core.records import GenerationSettings, Request, Response, Sample, user
from visioneval.core.solver import Solved

if TYPE_CHECKING:
    from visioneval.benchmarks.hallusionbench.items import Item
    from visioneval.core.solver import Ask

GRADER_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=16)
MATCHER_TOKENS = 2048  # VLMEvalKit's OpenAIWrapper default ([V] vlmeval/api/gpt.py:93)
GRADED = ("paper", "lmms-eval")


class JudgeFailed(Exception):
    """A judge step without a verdict; the message says why."""


@dataclass(frozen=True)
class Judges:
    """The judge models asked, the protocols scored, and how a sample becomes its item under
    each label set (the benchmark's `items`)."""

    grader: BackendSpec | None
    matcher: BackendSpec | None
    protocols: list[str]
    items: Callable[[Sample], dict[str, Item]]

    @classmethod
    def for_options(cls, options: HallusionBenchOptions,
                    items: Callable[[Sample], dict[str, Item]]) -> Judges:
        def spec(model: str | None) -> BackendSpec | None:
            if model is None or options.judge_backend is None:
                return None
            return BackendSpec(kind=options.judge_backend, model=model,
                               base_url=options.judge_base_url,
                               api_key_env=options.judge_api_key_env)

        return cls(spec(options.judge_model), spec(options.vlmevalkit_judge_model),
                   options.protocols, items)

    @property
    def grader_spec(self) -> BackendSpec | None:
        return self.grader

    @property
    def panel(self) -> tuple[BackendSpec, ...]:
        return (self.matcher,) if self.matcher is not None else ()

    async def solve(self, sample: Sample, ask: Ask) -> Solved:
        answer = await ask(Request(sample.messages, ask.settings))
        if not answer.ok:
            return Solved(answer)
        text = answer.text or ""
        items = self.items(sample)
        protocols = self.protocols
        verdicts: dict[str, scoring.Verdicts] = {}
        said: dict[str, Any] = {}
        try:
            asked: dict[tuple[str, str], scoring.Verdicts] = {}
            for label_set, item in items.items():
                labels = (item.gt_answer, item.gt_answer_details)
                if labels not in asked:
                    asked[labels] = await self._verdicts(item, text, protocols, ask, said)
                verdicts[label_set] = asked[labels]
        except JudgeFailed as exc:
            failed = answer.model_copy(update={"text": None,
                                               "error": f"judge: {exc}"[:500]})
            return Solved(failed, {"answer": stored.excerpt(text)} | said, {})
        parsed, scores = scoring.score(items, text, protocols, verdicts)
        return Solved(answer, parsed | said, scores)

    async def _verdicts(self, item: Item, text: str, protocols: list[str], ask: Ask,
                        said: dict[str, Any]) -> scoring.Verdicts:
        grader = matcher = None
        if self.grader is not None and any(p in GRADED and scoring.takes(p, item)
                                           for p in protocols):
            reply = await ask(Request((user(rules.judge_prompt(
                item.question, item.gt_answer_details, text)),), GRADER_SETTINGS), _said,
                judge=True)
            words = _text(reply, "the grader")
            said.setdefault("grader_reply", stored.excerpt(words))
            grader = rules.judge_code(words)
        if self.matcher is not None and "vlmevalkit" in protocols and \
                scoring.takes("vlmevalkit", item) and rules.yes_no(text) == "Unknown":
            matcher = "Unknown"
            for attempt in range(rules.MATCH_TRIES):
                settings = GenerationSettings(temperature=0.5 * attempt,
                                              max_tokens=MATCHER_TOKENS)
                reply = await ask(Request((user(rules.match_prompt(item.question, text)),),
                                          settings), _said, panel=1)
                matcher = rules.yes_no(_text(reply, "VLMEvalKit's judge"))
                said.setdefault("matcher_replies", []).append(
                    stored.excerpt(reply.text or ""))
                if matcher != "Unknown":
                    break
        return scoring.Verdicts(grader, matcher)


def _said(reply: Response) -> bool:
    """Whether a judge's reply may be cached: one with no text is a failure to retry."""
    return bool((reply.text or "").strip())


def _text(reply: Response, who: str) -> str:
    if not reply.ok:
        raise JudgeFailed(f"{who}'s request failed ({reply.error})")
    if not (reply.text or "").strip():
        raise JudgeFailed(f"{who} replied nothing (a reasoning model needs more than its "
                          "token cap)")
    return reply.text or ""
