"""`visioneval loopback`: a scripted model server for trying visioneval without a model."""

from __future__ import annotations

import asyncio
import errno
import os
import sys
from dataclasses import dataclass

from visioneval.loopback.batches import BatchScript
from visioneval.loopback.observer import DEFAULT_CURVES, Observer, answer_observer, parse_curves
from visioneval.loopback.server import (
    ANSWER_MODES,
    FAULTS,
    SEEDED_MODES,
    THINKING_MODES,
    LoopbackServer,
    ServerScript,
    answer_fixed,
)
from visioneval.loopback.varying import answer_varying
from visioneval.loopback.varying import parse as parse_varying
from visioneval.stats.psychometric import Sigmoid

OBSERVER_FORMS = ("weibull", "logistic")


@dataclass(frozen=True)
class ObserverFlags:
    """`--answer observer`'s flags: psychometric curves per feature (detection), d′ and
    criterion (yes/no), the form of F, and the observer's seed."""

    curves: str = DEFAULT_CURVES
    form: str = "weibull"
    dprime: float = 1.5
    criterion: float = 0.0
    seed: int = 0

    def observer(self) -> Observer:
        if self.form not in OBSERVER_FORMS:
            raise ValueError(f"--observer-form {self.form!r}: use {', '.join(OBSERVER_FORMS)}")
        form: Sigmoid = "weibull" if self.form == "weibull" else "logistic"
        return Observer(parse_curves(self.curves), form, self.dprime, self.criterion,
                        self.seed)


def build_script(models: tuple[str, ...], answer: str, latency: float, fail_rate: float,
                 faults: str, seed: int, thinking: str = "none",
                 observer: ObserverFlags | None = None, downscale: float | None = None,
                 max_side: int | None = None, batches: BatchScript | None = None
                 ) -> ServerScript:
    if observer is not None and answer != "observer":
        raise ValueError("the --observer flags need --answer observer")
    if answer == "observer":
        answerer = answer_observer((observer or ObserverFlags()).observer())
    elif answer.startswith("fixed:"):
        answerer = answer_fixed(answer.removeprefix("fixed:"))
    elif answer.startswith("varying:"):
        answerer = answer_varying(*parse_varying(answer.removeprefix("varying:")), seed=seed)
    elif answer in ANSWER_MODES:
        answerer = ANSWER_MODES[answer]
    elif answer in SEEDED_MODES:
        answerer = SEEDED_MODES[answer](seed)
    else:
        raise ValueError(f"--answer {answer!r}: use {', '.join([*ANSWER_MODES, *SEEDED_MODES])}"
                         ", observer, varying:A,B or fixed:TEXT")
    chosen = tuple(f.strip() for f in faults.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAULTS]
    if unknown:
        raise ValueError(f"--faults: unknown {', '.join(unknown)}; choose from {', '.join(FAULTS)}")
    if thinking != "none" and thinking not in THINKING_MODES:
        raise ValueError(f"--thinking {thinking!r}: use none, {', '.join(THINKING_MODES)}")
    return ServerScript(models=models, answer=answerer, latency_s=latency, fail_rate=fail_rate,
                        faults=chosen, seed=seed, thinking=THINKING_MODES.get(thinking),
                        downscale=downscale, max_side=max_side,
                        batches=batches or BatchScript())


async def _serve(script: ServerScript, port: int) -> None:
    server = LoopbackServer(script)
    await server.start(port)
    print(f"loopback model server on {server.base_url} serving {', '.join(script.models)} "
          f"(checkpoint {script.served_checkpoint()})\n"
          f"{_resizing(script)}"
          f"  OpenAI:    --backend openai --base-url {server.base_url}/v1\n"
          f"  Ollama:    --backend ollama --base-url {server.base_url}\n"
          f"  Anthropic: --backend anthropic --base-url {server.base_url} "
          "(any key in ANTHROPIC_API_KEY)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def _resizing(script: ServerScript) -> str:
    """The line saying how images are reduced before the model looks, if they are."""
    steps = []
    if script.downscale is not None and script.downscale != 1.0:
        steps.append(f"each side divided by {script.downscale:g}")
    if script.max_side is not None:
        steps.append(f"a long edge over {script.max_side} px brought down to it")
    return f"  images reduced (Lanczos) before the model looks: {', then '.join(steps)}\n" \
        if steps else ""


def serve(port: int, models: tuple[str, ...], answer: str, latency: float, fail_rate: float,
          faults: str, seed: int, thinking: str = "none",
          observer: ObserverFlags | None = None, downscale: float | None = None,
          max_side: int | None = None, batches: BatchScript | None = None) -> int:
    try:
        if not 0 <= port <= 65535:
            raise ValueError(f"--port {port}: a port is a number from 0 to 65535 "
                             "(0: any free port)")
        script = build_script(models, answer, latency, fail_rate, faults, seed, thinking,
                              observer, downscale, max_side, batches)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(script, port))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{port}: {_why(exc)}", file=sys.stderr)
        return 2
    return 0


def _why(exc: OSError) -> str:
    """The reason in a few words (asyncio's own message repeats the address)."""
    if exc.errno == errno.EADDRINUSE:
        return "address already in use (choose another --port, or 0 for any free port)"
    return os.strerror(exc.errno).lower() if exc.errno else str(exc)


def loopback(*, port: int, models: list[str] | None, answer: str, latency: float,
             fail_rate: float, faults: str, seed: int, thinking: str, observer: str | None,
             observer_form: str | None, observer_dprime: float | None,
             observer_criterion: float | None, observer_seed: int | None,
             downscale: float | None, max_side: int | None, batch_delay: float,
             batch_error_every: int) -> int:
    """`visioneval loopback`'s flags to a server (model "m" when none is named; the
    observer's flags only when one is given, each left out keeping its default)."""
    given = (observer, observer_form, observer_dprime, observer_criterion, observer_seed)
    default = ObserverFlags()
    flags = None if all(v is None for v in given) else ObserverFlags(
        default.curves if observer is None else observer,
        default.form if observer_form is None else observer_form,
        default.dprime if observer_dprime is None else observer_dprime,
        default.criterion if observer_criterion is None else observer_criterion,
        default.seed if observer_seed is None else observer_seed)
    batches = BatchScript(delay_s=batch_delay, error_every=batch_error_every)
    return serve(port, tuple(models or ["m"]), answer, latency, fail_rate, faults, seed,
                 thinking, flags, downscale, max_side, batches)
