"""`visioneval probe resolution`: how much of an image's detail reaches the model.

Many APIs resize an image before the model looks (Anthropic brings a long edge over 1568
pixels down; OpenAI tiles at a "detail" level; vLLM's Qwen processors cap `max_pixels`).
The probe sends the canary series (`probe.canary`: stripes of known period, horizontal or
vertical) through the backend, asks which way the stripes run, and fits the psychometric
function (2AFC: guess rate 0.5) to proportion correct against period, one point per trial
(`stats.psychometric_fit`). The period read correctly 75% of the time, over the period a
reader needs when it receives every pixel (`baseline_period`), is the factor by which the
image was effectively reduced; the canvas's long side over that factor is the effective
long side.

The baseline is the loopback canary reader's (`probe.reader`): its threshold in the pixels
it receives, measured through known reductions (measure/resolution_probe_recovery.py).
A model needs at least as coarse a grating as that ideal reader, so against a model the
effective long side is a lower bound on the resolution that reaches it: a loss the probe
reports may be the model's own as well as the provider's resizing (docs/probe.md).

A failed request is an error, counted and never scored; an answer naming neither
orientation is scored wrong and counted as unparsed, as the psychophysics benchmark scores
a detection answer that names no feature."""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from visioneval.backends.base import Backend, PreflightError
from visioneval.backends.registry import BackendSpec, make_backend
from visioneval.core import defaults
from visioneval.core.backend_spec import LOCAL_KINDS
from visioneval.core.records import GenerationSettings, Request, Response, user
from visioneval.engine.retry import RetryPolicy, RetryWatch, error_reason, generate
from visioneval.io.images import Image
from visioneval.probe.canary import (
    QUESTION,
    CanaryDesign,
    CanaryParams,
    Orientation,
    render,
    series,
)
from visioneval.stats.psychometric import criterion_level
from visioneval.stats.psychometric_fit import CHANCE_P, fit, open_ends

if TYPE_CHECKING:
    from visioneval.stats.psychometric_fit import Fit

READER_BASELINE_PERIOD = 1.5
"""The canary reader's 75%-correct period in pixels it receives: its threshold through a
Lanczos reduction by F is about 1.5·F sent pixels at every F tried (1.5 to 4: the median
of threshold / F over 40 seeded runs each was 1.51-1.52, 1.507 over all; docs/PERFORMANCE.md)."""
GUESS = 0.5  # two alternatives
Status = Literal["loss", "no loss", "not measured"]
ProgressFn = Callable[["Trial"], None]  # called with each trial as it ends
_ORIENTATION = re.compile(r"\b(horizontal|vertical)")


class ProbeSettings(BaseModel):
    """What the probe sends and how: the canary design, sampling settings, requests in
    flight, the retry budget, bootstrap resamples, and the baseline period (pixels a reader
    needs when it receives every pixel; the canary reader's by default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    design: CanaryDesign = Field(default_factory=CanaryDesign)
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    concurrency: int = Field(8, gt=0, le=defaults.MAX_CONCURRENCY)
    max_attempts: int = Field(defaults.MAX_ATTEMPTS, gt=0)
    timeout_s: float = Field(defaults.TIMEOUT_S, gt=0)
    backoff_base_s: float = Field(defaults.BACKOFF_BASE_S, ge=0)
    backoff_cap_s: float = Field(defaults.BACKOFF_CAP_S, ge=0)
    resamples: int = Field(1000, ge=0)
    baseline_period: float = Field(READER_BASELINE_PERIOD, gt=0)

    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_attempts, self.timeout_s, self.backoff_base_s,
                           self.backoff_cap_s)


class Trial(BaseModel):
    """One canary and what came back: the reply text and the orientation it names, or
    the request's error."""

    model_config = ConfigDict(frozen=True)

    canary: CanaryParams
    text: str | None = None
    answer: Orientation | None = None
    error: str | None = None

    @property
    def correct(self) -> bool | None:
        """None for a failed request (not scored); an unparsed answer is wrong."""
        return None if self.error is not None else self.answer == self.canary.orientation


class Band(BaseModel):
    """One band of periods (pixels of the sent image): canaries sent, answered, correct,
    unparsed (answered, naming neither orientation; scored wrong) and failed."""

    low: float
    high: float
    sent: int = 0
    answered: int = 0
    correct: int = 0
    unparsed: int = 0
    errors: int = 0


class ResolutionEstimate(BaseModel):
    """The probe's result. `status`: "loss" (a threshold period inside the tested range:
    `threshold_period` and its 95% parametric-bootstrap `interval`, the reduction `factor`
    = threshold / baseline and the `effective_long_side` = canvas / factor, each with its
    interval), "no loss" (75% correct already at the finest period) or "not measured"
    (`reason` says why). An interval's None end is open, never an extrapolation: the upper
    when resamples went beyond the coarsest period tried (or never reached 75% correct),
    the lower when they went below the finest; the effective long side's upper end is then
    the sent size. `summary` is the sentence the command prints."""

    status: Status
    reason: str | None = None
    summary: str
    canvas_long_side: int
    finest_period: float
    coarsest_period: float
    baseline_period: float
    threshold_period: float | None = None
    interval: tuple[float | None, float | None] | None = None
    factor: float | None = None
    factor_interval: tuple[float | None, float | None] | None = None
    effective_long_side: float | None = None
    effective_interval: tuple[float | None, float] | None = None
    n_requests: int
    n_answered: int
    n_errors: int
    n_unparsed: int
    errors: dict[str, int] = Field(default_factory=dict)
    bands: list[Band] = Field(default_factory=list)
    resamples: int = 0


def read_answer(text: str) -> Orientation | None:
    """The orientation the reply names first, or None if it names neither."""
    found = _ORIENTATION.search(text.lower())
    return None if found is None else "horizontal" if found[1] == "horizontal" else "vertical"


def _trial(canary: CanaryParams, response: Response) -> Trial:
    if response.error is not None:
        return Trial(canary=canary, error=response.error)
    text = response.text or ""
    return Trial(canary=canary, text=text, answer=read_answer(text))


async def ask(backend: Backend, settings: ProbeSettings | None = None,
              progress: ProgressFn | None = None) -> list[Trial]:
    """Send every canary of the design (in a seeded shuffled order, `concurrency` at a
    time, each image drawn in a thread just before it is sent) and return the trials in
    the design's order. Three refused keys or five 404s in a row stop the probe with
    PreflightError, as they stop a run."""
    settings = settings or ProbeSettings()
    canaries = series(settings.design)
    order = list(range(len(canaries)))
    random.Random(f"resolution-order:{settings.design.seed}").shuffle(order)
    gate = asyncio.Semaphore(settings.concurrency)
    policy, watch = settings.policy(), RetryWatch()
    trials: list[Trial | None] = [None] * len(canaries)

    async def one(index: int) -> None:
        async with gate:
            if watch.key_refused or watch.url_not_found:
                raise PreflightError(str(watch.auth_error or watch.not_found_error))
            png = await asyncio.to_thread(render, canaries[index])
            request = Request((user(Image.from_bytes(png), QUESTION),), settings.generation)
            response = await generate(backend, request, policy, watch)
        trials[index] = found = _trial(canaries[index], response)
        if progress is not None:
            progress(found)

    try:
        async with asyncio.TaskGroup() as group:
            for index in order:
                group.create_task(one(index))
    except* PreflightError as stopped:
        raise stopped.exceptions[0] from None
    return [t for t in trials if t is not None]


def estimate(trials: list[Trial], settings: ProbeSettings | None = None) -> ResolutionEstimate:
    """The estimate from the trials (CPU: the fit and its bootstrap, about a second)."""
    settings = settings or ProbeSettings()
    design = settings.design
    answered = [t for t in trials if t.error is None]
    base = {"canvas_long_side": design.long_side, "finest_period": design.finest,
            "coarsest_period": design.coarsest, "baseline_period": settings.baseline_period,
            "n_requests": len(trials), "n_answered": len(answered),
            "n_errors": len(trials) - len(answered),
            "n_unparsed": sum(t.answer is None for t in answered),
            "errors": dict(Counter(error_reason(t.error) for t in trials if t.error)),
            "bands": _bands(trials, design), "resamples": settings.resamples}
    if len({t.canary.period for t in answered}) < 2:
        reason = f"only {len(answered)} of {len(trials)} requests were answered" \
            if answered else f"none of the {len(trials)} requests was answered"
        return _not_measured(base, reason)
    # One point per trial: the periods are all distinct. The bootstrap (a second or two)
    # only where there is a threshold to give an interval to.
    periods = [t.canary.period for t in answered]
    correct = [int(bool(t.correct)) for t in answered]
    found = fit(periods, correct, [1] * len(answered), GUESS, resamples=0)
    if found.threshold is not None and settings.resamples:
        found = fit(periods, correct, [1] * len(answered), GUESS, resamples=settings.resamples)
    if found.threshold is not None:
        return _loss(base, found, settings)
    if _above_at_finest(found, min(t.canary.period for t in answered)):
        return _no_loss(base, f"proportion correct is above 0.75 already at the finest "
                              f"periods ({design.finest:g} px)")
    return _not_measured(base, found.reason or "the fit found no threshold")


def _bands(trials: list[Trial], design: CanaryDesign) -> list[Band]:
    edges = design.edges()
    bands = [Band(low=edges[i], high=edges[i + 1]) for i in range(design.levels)]
    for trial in trials:
        band = bands[trial.canary.level]
        band.sent += 1
        if trial.error is not None:
            band.errors += 1
            continue
        band.answered += 1
        band.correct += int(bool(trial.correct))
        band.unparsed += int(trial.answer is None)
    return bands


def _above_at_finest(found: Fit, finest: float) -> bool:
    """The fit beats guessing and reaches 75% correct below the finest period tried."""
    level = criterion_level(found.criterion, found.alpha, found.beta, found.guess,
                            found.lapse, found.form)
    return found.chance_p < CHANCE_P and level is not None and level < finest


def _sig(value: float) -> str:
    """Three significant figures, written as a whole number of pixels."""
    return f"{float(f'{value:.3g}'):.0f}"


def _tail(base: dict[str, object]) -> str:
    """What the sentence adds about failed and unparsed requests."""
    out = ""
    errors, unparsed, sent = base["n_errors"], base["n_unparsed"], base["n_requests"]
    if errors:
        out += f"; {errors} of {sent} requests failed (errors, not scored)"
    if unparsed:
        out += f"; {unparsed} answers named neither orientation (scored wrong)"
    return out


def _loss(base: dict[str, object], found: Fit, settings: ProbeSettings) -> ResolutionEstimate:
    threshold = float(found.threshold or 0.0)
    baseline, side = settings.baseline_period, settings.design.long_side
    factor = threshold / baseline
    if factor <= 1.0:
        return _no_loss(base, f"the threshold period ({threshold:.3g} px) is not above the "
                              f"baseline ({baseline:g} px)")
    low, high = open_ends(found.threshold_ci or (threshold, math.inf))
    interval = (low, high)
    factor_interval = (None if low is None else low / baseline,
                       None if high is None else high / baseline)
    effective = side / factor
    # A reduction below 1 would mean more pixels than were sent: the sent size is the cap.
    effective_interval = (None if high is None else side / (high / baseline),
                          float(side) if low is None else min(float(side),
                                                              side / (low / baseline)))
    lower = "up to" if effective_interval[0] is None else \
        f"{_sig(effective_interval[0])}\u2013"
    summary = (f"detail finer than 1/{_sig(effective)} of the long side is lost (effective "
               f"long side \u2248 {_sig(effective)} px, 95% interval {lower}"
               f"{_sig(effective_interval[1])}); the images were sent at {side} px"
               + _tail(base))
    return ResolutionEstimate(status="loss", summary=summary, threshold_period=threshold,
                              interval=interval, factor=factor,
                              factor_interval=factor_interval, effective_long_side=effective,
                              effective_interval=effective_interval, **base)


def _no_loss(base: dict[str, object], reason: str) -> ResolutionEstimate:
    summary = (f"no loss measurable down to a period of {base['finest_period']:g} px (the "
               f"images were sent at {base['canvas_long_side']} px)" + _tail(base))
    return ResolutionEstimate(status="no loss", reason=reason, summary=summary,
                              **base)


def _not_measured(base: dict[str, object], reason: str) -> ResolutionEstimate:
    return ResolutionEstimate(status="not measured", reason=reason,
                              summary=f"no estimate: {reason}" + _tail(base),
                              **base)


async def probe(backend: Backend, settings: ProbeSettings | None = None,
                progress: ProgressFn | None = None) -> ResolutionEstimate:
    """Send the canaries through an open, preflighted backend and estimate the effective
    resolution; the fit runs in a thread, so the event loop goes on meanwhile. What a run
    calls to record the estimate beside its results."""
    settings = settings or ProbeSettings()
    trials = await ask(backend, settings, progress)
    return await asyncio.to_thread(estimate, trials, settings)


def measure_resolution(target: Backend | BackendSpec, settings: ProbeSettings | None = None,
                       progress: ProgressFn | None = None) -> ResolutionEstimate:
    """`probe` from synchronous code: given a BackendSpec, the backend is built (its key
    from the environment), preflighted and closed; a Backend is used as it is. In async
    code, await `probe` instead."""
    return asyncio.run(_measure(target, settings or ProbeSettings(), progress))


async def _measure(target: Backend | BackendSpec, settings: ProbeSettings,
                   progress: ProgressFn | None) -> ResolutionEstimate:
    if not isinstance(target, BackendSpec):
        return await probe(target, settings, progress)
    async with checked_backend(target, settings) as backend:
        return await probe(backend, settings, progress)


@contextlib.asynccontextmanager
async def checked_backend(spec: BackendSpec, settings: ProbeSettings
                          ) -> AsyncIterator[Backend]:
    """The backend for `spec`, its key read from the environment and its server checked
    (preflight: it answers, serves the model, takes the key) before any canary is drawn."""
    if spec.kind in LOCAL_KINDS:
        raise ValueError(f"--backend {spec.kind}: the probe needs a model server (openai, "
                         "openrouter, ollama or anthropic)")
    async with make_backend(spec, connections=settings.concurrency) as backend:
        await backend.preflight()
        yield backend
