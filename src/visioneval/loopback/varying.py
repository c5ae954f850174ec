"""A scripted model whose answers vary from call to call by a known amount, for proving
`--epochs`' variance split: each item (a prompt: its text and its last image's tail) has its
own chance of a right answer, drawn once from Beta(a, b) by the server's seed; each request
is then right with that chance, drawn from the item, the server's seed and the request's
sampling seed, so the same request always gets the same answer (a resumed or cached run
agrees with a fresh one) and another seed draws anew. The right answer is the first option
the prompt offers (a benchmark of its own puts it there: `measure/epochs_recovery.py`).

Known values (the population's): between items Var(p) = ab / ((a + b)^2 (a + b + 1)),
within items E[p (1 - p)] = ab / ((a + b) (a + b + 1))."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from visioneval.baselines.prompt_reading import choices, in_asked_format

if TYPE_CHECKING:
    from visioneval.loopback.server import Prompt


def parse(text: str) -> tuple[float, float]:
    """"A,B" -> (a, b), both positive; a ValueError of one line otherwise."""
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--answer varying:{text}: give varying:A,B, the Beta's two "
                         "positive parameters (e.g. varying:2,1)") from None
    if not (a > 0 and b > 0):
        raise ValueError(f"--answer varying:{text}: both Beta parameters must be positive")
    return a, b


def between_within(a: float, b: float) -> tuple[float, float]:
    """The population's (between-item, within-item) variance of a 0/1 answer."""
    s = a + b
    return a * b / (s * s * (s + 1)), a * b / (s * (s + 1))


def answer_varying(a: float, b: float, seed: int = 0) -> Callable[[Prompt], str]:
    def item_of(prompt: Prompt) -> tuple[tuple[str, ...], int, float]:
        options = choices(prompt.text)
        tail = prompt.images[-1][-256:] if prompt.images else ""
        item = zlib.crc32((prompt.text + tail).encode())
        return options, item, random.Random(f"{seed}/{item}").betavariate(a, b)

    def wrong_of(options: tuple[str, ...], item: int) -> str:
        return options[1 + item % (len(options) - 1)] if len(options) > 1 else "none"

    def varying(prompt: Prompt) -> str:
        options, item, chance = item_of(prompt)
        right = random.Random(f"{seed}/{item}/{prompt.seed}").random() < chance
        return in_asked_format(prompt.text, options[0] if right else wrong_of(options, item))

    def distribution(prompt: Prompt) -> dict[str, float]:
        """The chance of each answer: what `logprobs` reports (the expected score's
        source, with no sampling in it)."""
        options, item, chance = item_of(prompt)
        return {in_asked_format(prompt.text, options[0]): chance,
                in_asked_format(prompt.text, wrong_of(options, item)): 1 - chance}

    varying.__name__ = f"varying_{a:g}_{b:g}_seed{seed}"
    varying.distribution = distribution  # type: ignore[attr-defined]
    return varying
