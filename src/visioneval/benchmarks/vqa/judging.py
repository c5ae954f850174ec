"""`--scorer judge`: the model answers, then a rubric judge model grades the answer against
the reference while seeing the image (the evaluators' judge: prompt, one repair, verdict).

The answer counts as correct when the rubric score reaches the threshold. A judge request
that fails, or a reply that is still no verdict after its repair, makes the sample an error
(retried on --resume, the model's answer then coming from the cache), never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from visioneval import excerpts as stored
from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.vqa import scorers
from visioneval.benchmarks.vqa.options import VqaOptions
from visioneval.core.records import GenerationSettings, Request, Sample
from visioneval.core.solver import Solved
from visioneval.evaluators.judge import Case, judge_once, judge_request
from visioneval.evaluators.rubric import Rubric, load_rubric

if TYPE_CHECKING:
    from visioneval.core.solver import Ask

RUBRIC = Path(__file__).with_name("judge_rubric.md")
JUDGE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=1024)


@dataclass(frozen=True)
class Grader:
    spec: BackendSpec
    rubric: Rubric
    threshold: float

    @classmethod
    def for_options(cls, options: VqaOptions) -> Grader:
        assert options.judge_backend is not None and options.judge_model is not None
        spec = BackendSpec(kind=options.judge_backend, model=options.judge_model,
                           base_url=options.judge_base_url,
                           api_key_env=options.judge_api_key_env)
        rubric = load_rubric(options.judge_rubric or str(RUBRIC))
        threshold = rubric.pass_threshold if options.judge_threshold is None \
            else options.judge_threshold
        return cls(spec, rubric, threshold)

    async def solve(self, sample: Sample, ask: Ask) -> Solved:
        answer = await ask(Request(sample.messages, ask.settings))
        if not answer.ok:
            return Solved(answer)
        question = sample.messages[-1]
        case = Case(input=question.text(), output=answer.text or "",
                    expected_output=_reference(sample), images=tuple(question.images()))
        verdict, trace, _ = await judge_once(
            ask, judge_request(self.rubric, case, JUDGE_SETTINGS), self.rubric, to_judge=True)
        if verdict is None:
            why = trace.get("request_error") or "; ".join(trace.get("parse_errors", []))
            failed = answer.model_copy(update={"text": None,
                                               "error": f"judge: no verdict ({why})"[:500]})
            return Solved(failed, {"answer": stored.excerpt(answer.text or ""),
                                   "judge_trace": trace}, {})
        score = self.rubric.weighted(verdict["scores"])
        passed = score >= self.threshold
        parsed: dict[str, Any] = {
            "judge": f"score {score:.2f}, {'pass' if passed else 'fail'}",
            "verdict": {"scores": verdict["scores"],
                        "reasoning": stored.excerpt(verdict["reasoning"]),
                        "details": verdict["details"]}}
        return Solved(answer, parsed, {"judge": {"correct": float(passed), "score": score}})


def _reference(sample: Sample) -> str:
    """The reference answer as the judge reads it: accepted answers joined by "or"; an
    option's letter with its text ("B. red") when the question offers options."""
    target = sample.target
    if isinstance(target, list | tuple):
        return " or ".join(map(str, target))
    text = str(target).strip()
    choices = sample.metadata.get("choices") or []
    index = scorers.option_index(text, choices) if choices else None
    if index is not None:
        return f"{scorers.LETTERS[index]}. {choices[index]}"
    return text
