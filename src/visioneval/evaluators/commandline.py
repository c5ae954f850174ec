"""How `visioneval evaluate` departs from the flags every run command shares: its model is
the judge (`--judge-backend`, `--judge-model` ..., repeated for several judges), its
generation settings are its own options (`--judge-temperature`, `--judge-max-tokens`), a
run of validators alone needs no model, and the case file is its argument."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from visioneval.core.benchmark import JUDGE_OPTIONS
from visioneval.core.commandline import CommandLine, ModelsGiven, ModelsTaken, Refused, Spelled
from visioneval.evaluators.options import EvaluateOptions

if TYPE_CHECKING:
    from pydantic import BaseModel

    from visioneval.core.records import GenerationSettings


def _judge_settings(options: BaseModel) -> GenerationSettings:
    assert isinstance(options, EvaluateOptions)
    return options.judge_settings()


def _judges(given: ModelsGiven, resume: Path | None) -> ModelsTaken:
    from visioneval.evaluators.panel import judges

    return judges(given, resume)


COMMAND_LINE = CommandLine(
    spelled={
        "backend": Spelled("--judge-backend",
                           "openai, openrouter, ollama, anthropic or builtin; per judge."),
        "model": Spelled("--judge-model",
                         "A vision-capable model; repeat it for several judges."),
        "base_url": Spelled("--judge-base-url", "One per judge, or replicas of one judge.",
                            "the backend's"),
        "api_key_env": Spelled("--judge-api-key-env", "Key variable, per judge.",
                               "a hosted API's own, else none")},
    model_panel=JUDGE_OPTIONS, models=_judges, filled=("panel",), model_optional=True,
    model_hint="a vision-capable model", model_is_judge=True, settings=_judge_settings,
    refused=(
        Refused(("--temperature", "--max-tokens"),
                "the judge's are --judge-temperature and --judge-max-tokens"),
        Refused(("--variant",),
                "evaluate grades answers already given, so no request variant applies; "
                "--judge-controls checks the judges (blind: the same request without its "
                "images)"),
        Refused(("--epochs", "--score"),
                "evaluate grades answers already given; --judge-samples asks each judge "
                "several times, and the judge card splits its variation"),
        Refused(("--target-ci", "--min-samples"),
                "evaluate's numbers are a pass rate per evaluator, not one proportion of "
                "samples a run can stop on; run it without --target-ci")),
    argument="cases", resume_refuses_options=True,
    out_shown="results/evaluate-<judge>-<time>")
