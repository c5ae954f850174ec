"""`visioneval probe resolution`: the canaries sent, a table of correct answers per period
band, and the estimate's sentence (or the estimate as JSON)."""

from __future__ import annotations

import asyncio

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from visioneval.backends.registry import BackendSpec
from visioneval.commands.common import consoles, guarded
from visioneval.commands.flags import generation
from visioneval.core import defaults
from visioneval.engine.progress import RunProgress
from visioneval.probe.canary import CanaryDesign
from visioneval.probe.resolution import (
    ProbeSettings,
    ResolutionEstimate,
    checked_backend,
    probe,
)
from visioneval.terminal import line

EXIT_FAILED = 1  # as a run whose samples failed


def resolution(*, backend: str | None, model: str | None, base_url: list[str] | None,
               api_key_env: str | None, long_side: int, levels: int, trials: int, seed: int,
               max_tokens: int, concurrency: int, max_attempts: int | None,
               timeout: float | None, json_out: bool, progress: bool) -> int:
    """`visioneval probe resolution`'s flags (the engine's defaults for those not given);
    exit 0, 1 when no stripe image was answered, or 2 with one line."""
    console, err = consoles()

    def action() -> int:
        return resolution_command(
            console, err, backend=backend, model=model, base_url=base_url,
            api_key_env=api_key_env, long_side=long_side, levels=levels, trials=trials,
            seed=seed, max_tokens=max_tokens, concurrency=concurrency,
            max_attempts=defaults.MAX_ATTEMPTS if max_attempts is None else max_attempts,
            timeout_s=defaults.TIMEOUT_S if timeout is None else timeout, json_out=json_out,
            progress=progress)

    return guarded(err, action)


def resolution_command(console: Console, err: Console, *, backend: str | None,
                       model: str | None, base_url: list[str] | None,
                       api_key_env: str | None, long_side: int, levels: int, trials: int,
                       seed: int, max_tokens: int, concurrency: int, max_attempts: int,
                       timeout_s: float, json_out: bool, progress: bool = True) -> int:
    if backend is None or not model:
        raise ValueError("give --backend and --model (and --base-url for a server of your "
                         "own), e.g. --backend openai --model gpt-4o")
    spec = BackendSpec.model_validate({"kind": backend, "model": model, "base_url": base_url,
                                       "api_key_env": api_key_env})
    design = _design(long_side, levels, trials, seed)
    settings = ProbeSettings(design=design, generation=generation(None, max_tokens, max_tokens),
                             concurrency=concurrency, max_attempts=max_attempts,
                             timeout_s=timeout_s)
    found = asyncio.run(_send(spec, settings, err, progress and not json_out))
    if json_out:
        console.print_json(found.model_dump_json())
    else:
        show(console, found)
    if found.n_requests and not found.n_answered:
        reasons = "; ".join(f"{n} x {why}" for why, n in found.errors.items())
        err.print(f"error: none of the {found.n_requests} stripe images was answered ({reasons}): "
                  "no estimate", style="red", highlight=False, soft_wrap=True, markup=False)
        return EXIT_FAILED
    return 0


async def _send(spec: BackendSpec, settings: ProbeSettings, err: Console,
                show_progress: bool) -> ResolutionEstimate:
    """The canaries sent, once the server has taken the key (nothing is drawn or said
    before), on the engine's progress bar, and the estimate."""
    design = settings.design
    async with checked_backend(spec, settings) as backend:
        line(err, f"sending {design.requests} stripe images ({design.long_side} x "
                  f"{design.long_side} px, periods {design.finest:g} to {design.coarsest:g} "
                  f"px) to {spec.model}")
        with RunProgress(design.requests, "stripe images", console=err,
                         enabled=show_progress) as bar:
            return await probe(backend, settings,
                               lambda trial: bar.advance(error=trial.error is not None))


def _design(long_side: int, levels: int, trials: int, seed: int) -> CanaryDesign:
    """The design, or one line saying which flag does not fit (pydantic's own is long)."""
    try:
        return CanaryDesign(long_side=long_side, levels=levels, trials=trials, seed=seed)
    except ValidationError as exc:
        raise ValueError(f"--long-side {long_side}: {exc.errors()[0]['msg']}") from None


def show(console: Console, found: ResolutionEstimate) -> None:
    """Correct answers per band of period, then the estimate's sentence."""
    table = Table(title="Correct answers by stripe period (pixels of the sent image)")
    for name in ("period (px)", "sent", "answered", "correct", "unparsed", "failed"):
        table.add_column(name, justify="right")
    for band in found.bands:
        share = f" ({band.correct / band.answered:.0%})" if band.answered else ""
        table.add_row(f"{band.low:.2f}\u2013{band.high:.2f}", str(band.sent),
                      str(band.answered), f"{band.correct}{share}", str(band.unparsed),
                      str(band.errors))
    console.print(table)
    if found.threshold_period is not None and found.interval is not None:
        low = "open" if found.interval[0] is None else f"{found.interval[0]:.3g}"
        high = "open" if found.interval[1] is None else f"{found.interval[1]:.3g}"
        console.print(f"75% correct at a period of {found.threshold_period:.3g} px (95% "
                      f"interval {low}\u2013{high}); a reader receiving "
                      f"every pixel needs {found.baseline_period:g} px.", highlight=False)
    console.print(found.summary, highlight=False)
