"""`visioneval loopback`: a scripted model server for trying visioneval without a model."""

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
                                        "judge (a scripted rubric verdict) or fixed:TEXT.")
                      ] = "popout",
    latency: Annotated[float, typer.Option(help="Seconds before each answer.")] = 0.0,
    fail_rate: Annotated[float, typer.Option(min=0, max=1, help="Share of requests that fail.")
                         ] = 0.0,
    faults: Annotated[str, typer.Option(help="Faults to draw from: 429,500,drop,stall.")
                      ] = "429,500,drop",
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
    thinking: Annotated[str, typer.Option(help="Answer as a reasoning model: inline "
                                          "(<think>thinking</think> before the answer), "
                                          "closing (only </think>), field (reasoning_content, "
                                          "Anthropic thinking blocks, Ollama thinking), cut "
                                          "(max_tokens runs out while thinking) or none.")
                        ] = "none",
) -> None:
    """Serve a scripted model over the OpenAI, Ollama and Anthropic protocols on 127.0.0.1."""
    from visioneval.commands.loopback import serve

    raise typer.Exit(serve(port, tuple(model or ["m"]), answer, latency, fail_rate,
                           faults, seed, thinking))
