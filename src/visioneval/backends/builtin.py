"""Offline models: `popout` (a classical image-processing baseline that finds the odd object),
`random` and `majority`. They read the prompt and the last image like a VLM would."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor

from visioneval.backends.base import Backend, PermanentError, PreflightError
from visioneval.baselines.prompt_reading import (
    choices,
    in_asked_format,
    number_range,
    vocabulary,
)
from visioneval.core.records import Request, Response, stable_hash
from visioneval.io.images import decode_problem
from visioneval.workers import pool

MODELS = {
    "popout": "finds the odd object by colour, area and orientation statistics",
    "random": "one of the prompt's options, uniformly (seeded per request), in the asked "
              "format; a whole number in the range a question asks for a number from",
    "majority": "the most common answer of the dataset, always",
    "reader": "reads a classic paradigm's stimulus from its pixels (Vernier offset, contrast, "
              "gap, ...), as a classical observer that really sees",
}
# Bump when a builtin model answers differently (2: `random` writes "Answer: X" when asked;
# 3: it reads lettered option lines and "Options: a, b" lines; 4: popout answers yes/no;
# 5: `random` answers Yes or No to a question that lists no options; 6: it answers "a number
# from A to B" with a whole number in that range).
RULES_VERSION = 6


SERVERS = "--backend openai, openrouter, ollama or anthropic"


def check_fits(model: str, benchmark: str, supported: Sequence[str], note: str = "") -> None:
    """Refuse a baseline the benchmark was not made for (popout answers SalBench's feature
    question whatever it is asked). Each benchmark lists its own in `builtin_models`; `note`
    says which of its options take one when that depends on them (its definition's
    `builtin_note`)."""
    if model in supported:
        return
    if not supported:
        which = (f"with these options ({note})" if note else
                 f"(the builtin models {', '.join(MODELS)} answer other benchmarks)")
        raise PreflightError(f"{benchmark} has no builtin model {which}; use a model server "
                             f"({SERVERS})")
    if model not in MODELS:
        raise PreflightError(f"unknown builtin model '{model}'; {benchmark}'s builtin models: "
                             f"{', '.join(supported)}")
    raise PreflightError(f"builtin model '{model}' does not fit {benchmark}; its builtin "
                         f"models: {', '.join(supported)}")


def _popout(prompt: str, image: bytes) -> str:
    from visioneval.baselines import popout  # imported in the worker process

    return popout.answer(prompt, image)


class BuiltinBackend(Backend):
    name = "builtin"

    def __init__(self, model: str, *, majority: Mapping[tuple[str, ...], str] | None = None,
                 reader: Callable[[str, bytes], str] | None = None, seed: int = 0,
                 workers: int | None = None):
        super().__init__(model)
        self._majority = dict(majority or {})
        self._reader = reader
        self._seed = seed
        self._workers = workers or os.cpu_count() or 1
        self._pool: Executor | None = None

    def identity(self) -> dict[str, object]:
        """Includes the rules' version: cached answers of older rules are not reused."""
        return super().identity() | {"rules": RULES_VERSION}

    async def preflight(self) -> None:
        if self.model not in MODELS:
            raise PreflightError(f"unknown builtin model '{self.model}'; choose from "
                                 f"{', '.join(MODELS)}")

    async def complete(self, request: Request) -> Response:
        message = request.messages[-1]
        prompt, images = message.text(), message.images()
        classes = vocabulary(prompt)
        if self.model in ("popout", "reader"):
            if not images:
                return Response(text=classes[0], finish_reason="stop")
            last = images[-1]
            problem = decode_problem(last.width, last.height)  # from the header, no decode
            if problem:
                raise PermanentError(f"{self.model} does not decode image "
                                     f"{last.sha256[:12]}: {problem}")
            if self._pool is None:  # processes, or threads under a script's top level
                self._pool = pool(self._workers, self.model)
            read = _popout if self.model == "popout" else self._reader
            if read is None:
                raise PermanentError("the builtin reader reads a classic paradigm's stimuli; "
                                     "this benchmark has no reader")
            loop = asyncio.get_running_loop()
            text = await loop.run_in_executor(self._pool, read, prompt, images[-1].data)
        elif self.model == "random":
            rng = random.Random(f"{self._seed}/{stable_hash(request.fingerprint())}")
            span = number_range(prompt)
            text = (str(rng.randint(*span)) if span else
                    in_asked_format(prompt, rng.choice(choices(prompt))))
        else:
            text = self._majority.get(classes, classes[0])
        return Response(text=text, finish_reason="stop")

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
