"""`visioneval loopback`: a scripted model server for trying visioneval without a model.

Each command imports its body from commands/ on first use: `visioneval --help` loads none."""

# Imports inside functions: each command loads its body on first use, so
# `visioneval --help` loads none.

from __future__ import annotations

from typing import Annotated

import typer

from visioneval.cli.app import app


@app.command()
def loopback(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 8765,
    model: Annotated[list[str] | None, typer.Option(help="Model name(s) to serve.")] = None,
    answer: Annotated[str, typer.Option(help="hash (one of the prompt's options, picked by a "
                                        "checksum), popout (the baseline looks at the image), "
                                        "judge (a scripted rubric verdict that ignores the "
                                        "image), judge-sees, judge-first, judge-no-counts, "
                                        "judge-noise (scripted rubric judges that read the "
                                        "scene written into an image: one that sees, one "
                                        "biased to the first image, one blind to counts, one "
                                        "that guesses), judge-varies (a rubric verdict whose "
                                        "scores vary from call to call by a known amount), "
                                        "observer (a simulated observer of "
                                        "psychophysics stimuli), canary (reads the resolution "
                                        "probe's stripes from the pixels it receives), "
                                        "varying:A,B (the first option right with a chance "
                                        "per item drawn from Beta(A, B), drawn anew per "
                                        "request seed) or fixed:TEXT.")
                      ] = "popout",
    latency: Annotated[float, typer.Option(help="Seconds before each answer.")] = 0.0,
    fail_rate: Annotated[float, typer.Option(min=0, max=1, help="Share of requests that fail.")
                         ] = 0.0,
    faults: Annotated[str, typer.Option(help="Faults to draw from: 429,500,drop,stall.")
                      ] = "429,500,drop",
    seed: Annotated[int, typer.Option(help="Seed of the fault draws (and of judge-noise's "
                                      "scores).")] = 0,
    thinking: Annotated[str, typer.Option(help="Answer as a reasoning model: inline "
                                          "(<think>thinking</think> before the answer), "
                                          "closing (only </think>), field (reasoning_content, "
                                          "Anthropic thinking blocks, Ollama thinking), cut "
                                          "(max_tokens runs out while thinking) or none.")
                        ] = "none",
    observer: Annotated[str | None, typer.Option(
        help="With --answer observer: each feature's psychometric function, "
             "FEATURE=THRESHOLD:SLOPE:LAPSE, comma-separated, e.g. "
             "orientation=8:3:0.02,color=6:2.5:0.02 (the default adds "
             "size=0.15:2:0.02); a classic paradigm's: NAME=A:B:LAPSE (a forced choice's "
             "threshold and slope, a comparison's PSE and JND, an estimate's bias and "
             "SD), e.g. vernier=0.2:1:0.02, or NAME=weber:W:LAPSE (a forced choice between "
             "two magnitudes at their ratio, with Weber fraction W).")
    ] = None,
    observer_form: Annotated[str | None, typer.Option(
        help="With --answer observer: weibull (default) or logistic.")] = None,
    observer_dprime: Annotated[float | None, typer.Option(
        help="With --answer observer: d' of yes/no answers (default 1.5).")] = None,
    observer_criterion: Annotated[float | None, typer.Option(
        help="With --answer observer: criterion c of yes/no answers (default 0; -inf: "
             "always yes).")] = None,
    observer_seed: Annotated[int | None, typer.Option(
        help="With --answer observer: the observer's seed (default 0).")] = None,
    downscale: Annotated[float | None, typer.Option(
        metavar="F", help="Reduce every image by F on each side (Lanczos) before the model "
        "looks, as a provider that resizes does.", show_default="no reduction")] = None,
    max_side: Annotated[int | None, typer.Option(
        metavar="N", help="Bring a long edge over N pixels down to N before the model looks "
        "(Anthropic: 1568).", show_default="no limit")] = None,
    batch_delay: Annotated[float, typer.Option(
        metavar="S", help="Seconds a batch (OpenAI's Batch API, Anthropic's Message "
        "Batches) stays in progress before it ends.")] = 0.0,
    batch_error_every: Annotated[int, typer.Option(
        metavar="K", help="In batches, every K-th request is answered with an error (0: "
        "none).")] = 0,
) -> None:
    """Serve a scripted model over the OpenAI, Ollama and Anthropic protocols on 127.0.0.1."""
    from visioneval.commands.loopback import loopback as command

    raise typer.Exit(command(
        port=port, models=model, answer=answer, latency=latency,
        fail_rate=fail_rate, faults=faults, seed=seed, thinking=thinking, observer=observer,
        observer_form=observer_form, observer_dprime=observer_dprime,
        observer_criterion=observer_criterion, observer_seed=observer_seed,
        downscale=downscale, max_side=max_side, batch_delay=batch_delay,
        batch_error_every=batch_error_every))
