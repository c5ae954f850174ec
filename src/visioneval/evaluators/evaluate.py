"""`visioneval evaluate`: eval cases graded by judges and validators on the common engine.

Each (case, evaluator) pair is one sample. A judge sample is solved with N judge calls (and
at most one repair each) through the engine's cache and retries. A validator sample asks no
model: a built-in validator is called in-process (`validators.inprocess`), a user's script
runs as a subprocess with its timeout; its record's response has `source="code"` and no
text. Either way the record holds the result in the one format, in `parsed["result"]`."""

from __future__ import annotations

import asyncio
import hashlib
import io
import statistics
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from visioneval.backends.registry import BackendSpec
from visioneval.core.benchmark import Benchmark
from visioneval.core.records import (
    GenerationSettings,
    Record,
    Request,
    Response,
    Sample,
    SkippedRow,
)
from visioneval.core.runfiles import BenchmarkPlan, RunInfo
from visioneval.core.solver import Ask, Solved
from visioneval.evaluators.cases import CaseSpec, EvaluatorSpec, UnusableCase, iter_cases
from visioneval.evaluators.checks import JudgeChecks
from visioneval.evaluators.controls import (
    control_group,
    control_id,
    control_requests,
    planned,
)
from visioneval.evaluators.human_labels import read_human_labels
from visioneval.evaluators.judge import SYSTEM, Case, combine, judge_once, judge_request
from visioneval.evaluators.metrics import JudgesMetrics
from visioneval.evaluators.options import EvaluateOptions
from visioneval.evaluators.panel import recorded
from visioneval.evaluators.rubric import Rubric, load_rubric
from visioneval.io import csvcells
from visioneval.io.images import Image
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries
from visioneval.validators.inprocess import run_builtin
from visioneval.validators.result import EvalResult
from visioneval.validators.runner import ValidatorCommand, run_validator

__all__ = ["EvalRun", "EvaluateOptions", "build", "summarize"]


class EvalRun(Benchmark[EvaluateOptions]):
    """No builtin model fits (judges are models; validators ask none) and no second judge
    model: the run's own model is the judge, and the cases hold the answers already."""

    name = "evaluate"

    def __init__(self, options: EvaluateOptions, reading: bool = False):
        """`reading`: rebuilt to read a run (report, thumbnails, merge), never to solve it:
        the recorded `allow_scripts` and `allow_outside_images` are turned off (a shared
        run directory must not run commands or read files on the reader's machine), and a
        case file with `script:` evaluators is read rather than refused."""
        if reading:
            options = options.model_copy(update={"allow_scripts": False,
                                                 "allow_outside_images": False})
        super().__init__(options)
        self.path = Path(options.cases)
        self.cases: list[tuple[CaseSpec, tuple[Image, ...]] | UnusableCase] = list(
            iter_cases(self.path, options.allow_outside_images))
        self.rubrics = self._check_evaluators()
        self.needs_judge = bool(self.rubrics)
        self.humans = read_human_labels(Path(options.human_labels)) \
            if options.human_labels else None
        if not reading:
            self._refuse_scripts()
            self._refuse_judge_checks_without_judges()
        self._refuse_text_only_judge()

    def model_use(self) -> str | None:
        """The judges need the run's model; validators alone need none."""
        return f"{self.path} uses judges" if self.needs_judge else None

    def _refuse_judge_checks_without_judges(self) -> None:
        options = self.options
        if (options.judge_controls or options.panel or options.human_labels) \
                and not self.needs_judge:
            raise ValueError(f"{self.path} has no judge evaluator: --judge-controls, several "
                             "--judge-model and --human-labels check judges")

    def _usable(self) -> Iterator[tuple[CaseSpec, tuple[Image, ...]]]:
        for entry in self.cases:
            if not isinstance(entry, UnusableCase):
                yield entry

    def _check_evaluators(self) -> dict[str, Rubric]:
        """Every rubric read and every validator named before anything is sent: a typo in
        an evaluator is refused in one line, not found halfway through a paid run."""
        rubrics: dict[str, Rubric] = {}
        for case, _ in self._usable():
            for spec in case.evaluators:
                try:
                    if spec.judge and spec.judge not in rubrics:
                        rubrics[spec.judge] = load_rubric(spec.judge, self.path.parent)
                    elif spec.validator:
                        ValidatorCommand.builtin(spec.validator)
                    elif spec.script is not None:
                        ValidatorCommand.script(spec.script, self.path.parent)
                except ValueError as exc:  # RubricError is a ValueError
                    raise ValueError(f"{self.path}: case {case.id}: {exc}") from None
        return rubrics

    def _refuse_scripts(self) -> None:
        scripted = [case.id for case, _ in self._usable() if any(e.script is not None
                                                                  for e in case.evaluators)]
        if scripted and not self.options.allow_scripts:
            raise ValueError(
                f"{self.path}: `script:` evaluators (cases {', '.join(scripted)}) run any "
                "command the case file names, with your permissions; if you trust this file, "
                "pass --allow-scripts")

    def _refuse_text_only_judge(self) -> None:
        if not self.options.judge_text_only:
            return
        for case, images in self._usable():
            if images:
                for spec in case.evaluators:
                    if spec.judge and self.rubrics[spec.judge].needs_images:
                        raise ValueError(
                            f"{self.path}: case {case.id}: judge {spec.judge} must see "
                            f"{len(images)} image(s), but the judge model is declared "
                            "text-only (--judge-text-only); use a vision model")

    def plan(self) -> BenchmarkPlan:
        digest = hashlib.sha256(self.path.read_bytes())
        for _, images in self._usable():
            for image in images:
                digest.update(image.sha256.encode())
        if self.humans is not None:  # people's scores are part of what the run measures
            digest.update(self.humans.sha256.encode())
        options = self.options.model_dump() | {"panel": recorded(self.options.panel)}
        return BenchmarkPlan.model_validate({
            "benchmark": self.name, "options": options,
            "dataset": {"source": str(self.path), "fingerprint": digest.hexdigest(),
                        "cases": sum(1 for _ in self._usable())}})

    def total(self) -> int:
        return sum(1 if isinstance(entry, UnusableCase) else
                   sum(self._per_evaluator(entry[0], entry[1], spec)
                       for spec in entry[0].evaluators)
                   for entry in self.cases)

    def _per_evaluator(self, case: CaseSpec, images: tuple[Image, ...],
                       spec: EvaluatorSpec) -> int:
        """Samples of one evaluator on one case: a validator's one; each judge's own and
        its controls."""
        if not spec.judge:
            return 1
        seen = Case(case.input, case.output, case.expected_output, images)
        controls = planned(self.options.judge_controls, self.rubrics[spec.judge], seen)
        return self.options.judges * (1 + sum(1 for _ in controls))

    @property
    def panel(self) -> tuple[BackendSpec, ...]:
        """Judges 2, 3 ...: the engine opens them beside the run's model (judge 1)."""
        return tuple(judge.spec() for judge in self.options.panel)

    def panel_of(self, sample: Sample) -> int:
        return int(sample.metadata.get("judge", 1)) - 1

    def checks(self) -> JudgeChecks | None:
        """What reads the judges' records into their cards (None: no case uses a judge)."""
        if not self.rubrics:
            return None
        return JudgeChecks(self.options, self.rubrics, self.prompt_sha256(), self.humans)

    def prompt_sha256(self) -> str:
        """The judge's instructions and every rubric the run uses: two runs with the same
        hash asked their judges the same way."""
        digest = hashlib.sha256(SYSTEM.encode())
        for name in sorted(self.rubrics):
            digest.update(self.rubrics[name].model_dump_json().encode())
        return digest.hexdigest()

    def samples(self) -> Iterator[Sample | SkippedRow]:
        settings = self.options.judge_settings()
        for entry in self.cases:
            if isinstance(entry, UnusableCase):
                yield SkippedRow(self.path.name, f"case {entry.name}", entry.reason)
                continue
            case, images = entry
            for spec in case.evaluators:
                if spec.judge:
                    yield from self._judge_samples(case, images, spec, settings)
                else:
                    yield self._validator_sample(case, spec)

    def _judge_samples(self, case: CaseSpec, images: tuple[Image, ...], spec: EvaluatorSpec,
                       settings: GenerationSettings) -> Iterator[Sample]:
        """Each judge's sample of the case (judge 1, the run's model, keeps the plain id),
        each followed by its controls."""
        rubric = self.rubrics[spec.judge or ""]
        seen = Case(case.input, case.output, case.expected_output, images)
        request = judge_request(rubric, seen, settings)
        target = {"rubric": spec.judge, "threshold": _threshold(spec, rubric.pass_threshold)}
        controls = list(control_requests(self.options.judge_controls, rubric, seen, settings))
        for judge in range(1, self.options.judges + 1):
            meta: dict[str, Any] = {"case": case.id, "evaluator": spec.label, "kind": "judge"}
            sample_id, group = f"{case.id}/{spec.label}", spec.label
            if judge > 1:
                meta["judge"] = judge
                sample_id, group = f"{sample_id}/judge{judge}", f"{group} [judge {judge}]"
            yield Sample(sample_id, group, request.messages, target, meta)
            for control in controls:
                yield Sample(control_id(sample_id, control.name),
                             control_group(group, control.name), control.request.messages,
                             target, {**meta, "control": control.name, "control_of": sample_id,
                                      **control.metadata()})

    def _validator_sample(self, case: CaseSpec, spec: EvaluatorSpec) -> Sample:
        meta = {"case": case.id, "evaluator": spec.label, "kind": spec.kind}
        payload = {"output": case.output, "expected_output": case.expected_output,
                   "input": case.input, **spec.options}
        if spec.threshold is not None:
            payload["threshold"] = spec.threshold
        # What is checked and by which check, spelled as in the case file; no command line.
        check = {"validator": spec.validator} if spec.validator else {"script": spec.script}
        target = {**check, "payload": payload,
                  "timeout_s": spec.timeout or self.options.validator_timeout_s}
        return Sample(f"{case.id}/{spec.label}", spec.label, (), target, meta)

    async def solve(self, sample: Sample, ask: Ask) -> Solved:
        if sample.metadata["kind"] == "judge":
            return await self._judge(sample, ask)
        return await self._check(sample.target)

    async def _check(self, target: dict[str, Any]) -> Solved:
        """A validator sample: no model, no text; the check's time is the latency."""
        started = time.perf_counter()
        if "validator" in target:
            result = await run_builtin(target["validator"], target["payload"],
                                       target["timeout_s"])
        elif not self.options.allow_scripts:  # a run rebuilt to be read never runs one
            result = EvalResult.error("`script:` evaluators run only with --allow-scripts")
        else:
            command = ValidatorCommand.script(target["script"], self.path.parent)
            result = await run_validator(command, target["payload"], target["timeout_s"])
        response = Response(source="code", latency_s=time.perf_counter() - started)
        return _solved(response, result)

    async def _judge(self, sample: Sample, ask: Ask) -> Solved:
        rubric = self.rubrics[sample.target["rubric"]]
        base = self.options.judge_settings()
        n = self.options.judge_samples
        panel = int(sample.metadata.get("judge", 1)) - 1  # judge 1 is the run's own model
        runs = await asyncio.gather(*(
            judge_once(ask, _with_settings(sample, base.model_copy(
                update={"seed": k} if n > 1 else {})), rubric, panel=panel)
            for k in range(n)))
        verdicts = [v for v, _, _ in runs if v is not None]
        traces = [t for _, t, _ in runs]
        replies = [r for _, _, r in runs if r is not None]
        if not replies:  # every judge request failed: an error the engine retries on resume
            error = traces[0].get("request_error", "judge request failed")
            return Solved(Response(error=error), {"result": EvalResult.error(
                f"judge request failed: {error}").model_dump()}, {})
        result = combine(rubric, verdicts, traces, sample.target["threshold"])
        return _solved(Response(text=replies[0]), result)

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        return {}, {}  # every sample is scored by `solve`

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        return summarize(records, self.checks())

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        path = directory / "results.csv"
        buf = io.StringIO()
        writer = csvcells.writer(buf, lineterminator="\n")
        writer.writerow(["case", "evaluator", "status", "score", "passed"])
        for case, block in metrics["cases"].items():
            for label, res in block["evaluators"].items():
                score = "" if res["score"] is None else f"{res['score']:.4f}"
                writer.writerow([case, label, res["status"], score, res["passed"]])
        path.write_text(buf.getvalue())
        return [path]


def _threshold(spec: EvaluatorSpec, default: float) -> float:
    return default if spec.threshold is None else spec.threshold


def _with_settings(sample: Sample, settings: GenerationSettings) -> Request:
    return Request(sample.messages, settings)


def _solved(response: Response, result: EvalResult) -> Solved:
    """An evaluator that could not judge is an error sample (counted, exit code 1, retried
    on --resume), with its result kept in `parsed`."""
    if result.status == "error":
        reason = str(result.details.get("error") or "evaluator error")
        failed = response.model_copy(update={"text": None, "error": reason[:500]})
        return Solved(failed, {"result": result.model_dump()}, {})
    scores = {} if result.score is None else \
        {"result": {"score": result.score, "passed": float(result.passed)}}
    return Solved(response, {"result": result.model_dump()}, scores)


def summarize(records: Iterable[Record], checks: JudgeChecks | None = None
              ) -> dict[str, Any]:
    """Pass rate and mean score per evaluator and per case; errors never count as 0. With
    `checks`, the judges' records also make their cards, and with several judges a judge
    evaluator's result on a case is the panel's (`JudgeChecks.panel`)."""
    results: dict[tuple[str, str], dict[str, Any]] = {}  # (evaluator, case) -> result
    for record in records:
        meta = record.metadata
        is_judge = meta.get("kind") == "judge"
        if checks is not None and is_judge:
            checks.add(record)
        if meta.get("control") or int(meta.get("judge", 1)) != 1:
            continue  # the controls and the other judges are read by the checks alone
        result = record.parsed.get("result") or EvalResult.error(
            record.response.error or "no result").model_dump()
        evaluator = str(meta.get("evaluator", record.group))
        results[(evaluator, str(meta.get("case", record.id)))] = \
            {k: result[k] for k in ("status", "score", "passed")}
    if checks is not None and checks.options.judges > 1:
        for evaluator, case in list(results):
            if (1, evaluator, case) in checks.main:
                results[(evaluator, case)] = checks.panel(evaluator, case)
    summary = _headline(results)
    if checks is not None:
        judges = checks.metrics()
        _judge_variation(summary["evaluators"], judges)
        summary["judges"] = judges.model_dump(exclude_defaults=True)
    return summary


def _judge_variation(blocks: dict[str, dict[str, Any]], judges: JudgesMetrics) -> None:
    """Beside each judge evaluator's headline, its judge's call-to-call variation: the one
    judge's, from its card; with several judges the headline is the panel's score, which
    no one judge's verdicts describe, and each card keeps its own."""
    first = judges.cards[0].evaluators
    for label, block in blocks.items():
        found = first.get(label)
        if found is None:
            continue  # a validator: no judge
        if len(judges.cards) > 1:
            block["judge_variation_unavailable"] = (
                f"{len(judges.cards)} judges: this score is the panel's; each judge's card "
                "has its own")
        elif found.judge_variation is not None:
            block["judge_variation"] = found.judge_variation.model_dump(exclude_none=True)
        else:
            block["judge_variation_unavailable"] = found.judge_variation_unavailable


def _headline(results: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    by_evaluator: dict[str, list[dict]] = {}
    passes: dict[str, Outcomes] = {}  # per processed sample: passed or not, for the interval
    cases: dict[str, dict[str, Any]] = {}
    for (evaluator, case_id), result in sorted(results.items()):
        by_evaluator.setdefault(evaluator, []).append(result)
        if result["status"] == "processed":
            passes.setdefault(evaluator, Outcomes(1)).add(f"{case_id}/{evaluator}",
                                                          (float(bool(result["passed"])),))
        case = cases.setdefault(case_id, {"evaluators": {}})
        case["evaluators"][evaluator] = result
    # Sorted, and means by fsum (statistics): the same whatever the journal's order, so a
    # merged run's metrics equal the run's done in one piece.
    # The pass rate's interval resamples in sample-id order (Outcomes): order-free as well.
    evaluators = {label: _block(by_evaluator[label], passes.get(label))
                  for label in sorted(by_evaluator)}
    cases = {key: cases[key] for key in sorted(cases)}
    for case in cases.values():
        case["evaluators"] = dict(sorted(case["evaluators"].items()))
        found = list(case["evaluators"].values())
        done = [r for r in found if r["status"] == "processed"]
        case["passed_all"] = bool(done) and len(done) == len(found) and \
            all(r["passed"] for r in done)
        case["mean_score"] = statistics.fmean(r["score"] for r in done) if done else None
    return {"evaluators": evaluators, "cases": cases}


def _block(results: list[dict], passes: Outcomes | None) -> dict[str, Any]:
    """Counts, pass rate (with its standard error and 95% bootstrap interval over the
    processed samples) and score statistics of one evaluator."""
    done = [r for r in results if r["status"] == "processed"]
    block: dict[str, Any] = {
        "n": len(results), "processed": len(done),
        "errors": sum(r["status"] == "error" for r in results),
        "skipped": sum(r["status"] == "skipped" for r in results),
        "passed": sum(bool(r["passed"]) for r in done),
    }
    if done:
        scores = [r["score"] for r in done]
        block |= {"pass_rate": block["passed"] / len(done), "mean_score": statistics.fmean(scores),
                  "score_stdev": statistics.pstdev(scores)}
        if passes is not None:
            attach(block, summaries(passes.matrix(), mean_statistic, ("pass_rate",)))
    else:
        block["unavailable"] = f"no processed results ({block['errors']} errors)"
    return block


def build(options: Mapping[str, Any] | BaseModel, reading: bool = False) -> EvalRun:
    return EvalRun(EvaluateOptions.model_validate(options), reading)
