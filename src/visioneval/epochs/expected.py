"""`--score expected`: each answer's expected outcome from the log-probabilities of its first
token, as Miller 2024 ("Adding error bars to evals", section 3.2) recommends where a provider
gives them: sum over the alternatives of P(token) x the outcome the benchmark's scorer gives
that token as the whole answer, over the probability the alternatives listed. It takes the
sampling out of each answer, so at the same spend the interval holds only the items'
variation.

It is defined where an answer is one token (a letter, Yes or No): an answer longer than its
first token, or one that came without log-probabilities, has none (counted and said); its
sampled outcome is still recorded and still feeds the benchmark's tables."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from visioneval.core.epoch_ids import EXPECTED, WHY_NONE
from visioneval.core.records import Record, Request, Response, Sample
from visioneval.core.solver import Solved

if TYPE_CHECKING:
    from visioneval.core.benchmark import Benchmark
    from visioneval.core.solver import Ask

TOP = 20  # alternatives asked for (OpenAI's largest `top_logprobs`)
NO_LOGPROBS = "the server sent no log-probabilities"
LONGER = "the answer is longer than its first token"
NOTHING_SCORED = "no alternative of the first token is an answer the benchmark scores"


async def solve_expected(benchmark: Benchmark, sample: Sample, ask: Ask) -> Solved:
    """Ask once, score the answer as always, and add its expected outcome."""
    response = await ask(Request(sample.messages, ask.settings))
    if not response.ok:
        return Solved(response)
    parsed, scores = benchmark.score(sample, response.text or "")
    value, why = expected_outcome(benchmark, sample, response)
    extra = {EXPECTED: value} if why is None else {EXPECTED: None, WHY_NONE: why}
    return Solved(response, {**parsed, **extra}, scores)


def expected_outcome(benchmark: Benchmark, sample: Sample, response: Response
                     ) -> tuple[float | None, str | None]:
    """(the expected outcome, None) or (None, why there is none)."""
    alternatives = response.first_token_logprobs
    if not alternatives:
        return None, NO_LOGPROBS
    text = (response.text or "").strip()
    if not text or text.split()[0] != text or len(text.split()) != 1:
        return None, LONGER
    total = weight = 0.0
    for token, logprob in alternatives.items():
        chance = math.exp(logprob)
        parsed, scores = benchmark.score(sample, token)
        record = Record.model_construct(id=sample.id, group=sample.group, target=sample.target,
                                        response=Response(text=token), parsed=parsed,
                                        scores=scores, metadata=sample.metadata, prompt=[])
        outcome = benchmark.headline_outcome(record)
        if outcome is None or not math.isfinite(outcome):
            continue
        total += chance * outcome
        weight += chance
    if weight <= 0:
        return None, NOTHING_SCORED
    return total / weight, None
