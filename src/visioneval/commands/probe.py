"""`visioneval probe resolution`: the canaries sent, a table of correct answers per period
band, and the estimate's sentence (or the estimate as JSON)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from visioneval.backends.registry import BackendSpec
from visioneval.core.records import GenerationSettings
from visioneval.probe.canary import CanaryDesign
from visioneval.probe.resolution import ProbeSettings, ResolutionEstimate, measure_resolution
from visioneval.terminal import line


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
    settings = ProbeSettings(design=design, generation=GenerationSettings(max_tokens=max_tokens),
                             concurrency=concurrency, max_attempts=max_attempts,
                             timeout_s=timeout_s)
    line(err, f"sending {design.requests} canary images ({long_side} x {long_side} px, "
              f"periods {design.finest:g} to {design.coarsest:g} px) to {model}")
    with Progress(TextColumn("canaries"), BarColumn(), MofNCompleteColumn(), console=err,
                  transient=True, disable=json_out or not progress or not err.is_terminal) as bar:
        task = bar.add_task("canaries", total=design.requests)
        found = measure_resolution(spec, settings,
                                   lambda done, _total: bar.update(task, completed=done))
    if json_out:
        console.print_json(found.model_dump_json())
    else:
        show(console, found)
    return 0


def _design(long_side: int, levels: int, trials: int, seed: int) -> CanaryDesign:
    """The design, or one line saying which flag does not fit (pydantic's own is long)."""
    from pydantic import ValidationError

    try:
        return CanaryDesign(long_side=long_side, levels=levels, trials=trials, seed=seed)
    except ValidationError as exc:
        raise ValueError(f"--long-side {long_side}: {exc.errors()[0]['msg']}") from None


def show(console: Console, found: ResolutionEstimate) -> None:
    """Correct answers per band of period, then the estimate's sentence."""
    table = Table(title="Canaries answered correctly, by period (pixels of the sent image)")
    for name in ("period (px)", "sent", "answered", "correct", "unparsed", "failed"):
        table.add_column(name, justify="right")
    for band in found.bands:
        share = f" ({band.correct / band.answered:.0%})" if band.answered else ""
        table.add_row(f"{band.low:.2f}\u2013{band.high:.2f}", str(band.sent),
                      str(band.answered), f"{band.correct}{share}", str(band.unparsed),
                      str(band.errors))
    console.print(table)
    if found.threshold_period is not None and found.interval is not None:
        high = "open" if found.interval[1] is None else f"{found.interval[1]:.3g}"
        console.print(f"75% correct at a period of {found.threshold_period:.3g} px (95% "
                      f"interval {found.interval[0]:.3g}\u2013{high}); a reader receiving "
                      f"every pixel needs {found.baseline_period:g} px.", highlight=False)
    console.print(found.summary, highlight=False)
