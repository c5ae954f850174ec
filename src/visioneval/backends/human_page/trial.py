"""A request turned into what a person is shown (`Shown`), and the desk where it waits for
the person's answer (`Desk`): the engine's one request in flight on one side, the page's
polls and answers on the other.

The answer buttons are the request's closed set of answers: a classic paradigm's options
from its PNG's `visioneval` chunk, else what the prompt offers (lettered lines, "Options:"
lists, yes or no: `baselines.prompt_reading.choices`, the reading the builtin `random`
model answers from). The chunk's parameters go to the page too (never drawn on it), so a
scripted observer in a browser test answers from the stimulus as the loopback observer
does."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from dataclasses import dataclass, field
from typing import Any

import orjson

from visioneval.baselines.prompt_reading import choices, in_asked_format
from visioneval.core.person import PersonAnswer
from visioneval.core.records import Request
from visioneval.io.pngtext import read_text

POLL_S = 20.0  # a page's poll is answered within this, trial or not (proxies close idle ones)


@dataclass(frozen=True)
class ShownImage:
    data: bytes
    mime: str
    width: int
    height: int


@dataclass(frozen=True)
class Shown:
    """One trial as the page shows it: the question, the images in their order, the
    answer options (empty: a free answer typed in a box), and the stimulus parameters."""

    key: str
    question: str
    images: tuple[ShownImage, ...]
    options: tuple[str, ...]
    stimulus: dict[str, Any] | None
    prompt: str = field(repr=False)

    @classmethod
    def of(cls, request: Request, key: str) -> Shown:
        messages = [m for m in request.messages if m.role != "assistant"]
        question = "\n\n".join(m.text() for m in messages if m.text().strip())
        images = tuple(ShownImage(i.data, i.mime, i.width, i.height)
                       for m in messages for i in m.images())
        stimulus = _stimulus(images[-1].data) if images and images[-1].mime == "image/png" \
            else None
        chunk = stimulus.get("options") if stimulus else None
        options = tuple(str(o) for o in chunk) if isinstance(chunk, list) and \
            stimulus is not None and stimulus.get("kind") != "estimate" else choices(question)
        return cls(key, question, images, options, stimulus, question)

    def answer_text(self, answer: str) -> str:
        """The person's choice written as the prompt asks ("Answer: X" where it asks for
        that), so the benchmark's own parser reads a person as it reads a model."""
        return in_asked_format(self.prompt, answer) if answer in self.options else answer

    def page_data(self, number: int, total: int | None) -> dict[str, Any]:
        return {"key": self.key, "number": number, "total": total,
                "question": self.question, "options": list(self.options),
                "images": [{"url": f"image/{self.key}/{i}", "width": im.width,
                            "height": im.height} for i, im in enumerate(self.images)],
                "stimulus": self.stimulus}


def _stimulus(png: bytes) -> dict[str, Any] | None:
    try:
        text = read_text(png)
        found = orjson.loads(text) if text else None
    except (ValueError, orjson.JSONDecodeError):
        return None
    return found if isinstance(found, dict) else None


@dataclass
class Answered:
    text: str
    person: PersonAnswer


class Desk:
    """The trial waiting for the person (at most one: the engine sends one at a time) and
    the count of trials answered, so a page reopened after closing it gets the same trial
    and the right number."""

    def __init__(self) -> None:
        self._session = secrets.token_hex(4)  # a page's answer to another session's trial
        self._keys = itertools.count(1)  # is refused, never recorded against this one's
        self._waiting: tuple[Shown, asyncio.Future[Answered]] | None = None
        self._arrived = asyncio.Event()
        self.answered = 0
        self.done_before = 0
        self.total: int | None = None
        self.finished = False
        self.polled = False  # a page has asked for a trial
        self.farewell_said = False  # a page has heard the run is over

    async def ask(self, request: Request) -> Answered:
        shown = Shown.of(request, f"{self._session}-{next(self._keys)}")
        future: asyncio.Future[Answered] = asyncio.get_running_loop().create_future()
        self._waiting = (shown, future)
        self._arrived.set()
        try:
            return await future
        finally:
            self._waiting = None
            self._arrived.clear()

    @property
    def number(self) -> int:
        """The waiting trial's place in the whole run (1-based)."""
        return self.done_before + self.answered + 1

    async def next(self, wait_s: float = POLL_S) -> Shown | None:
        """The waiting trial, waiting up to `wait_s` for one."""
        self.polled = True
        if self._waiting is None and not self.finished:
            try:
                await asyncio.wait_for(self._arrived.wait(), wait_s)
            except TimeoutError:
                return None
        return self._waiting[0] if self._waiting else None

    def image(self, key: str, index: int) -> ShownImage | None:
        if self._waiting is None or self._waiting[0].key != key:
            return None
        images = self._waiting[0].images
        return images[index] if 0 <= index < len(images) else None

    def finish(self) -> None:
        """No more trials: a poll waiting now, and every later one, hears so."""
        self.finished = True
        self._arrived.set()

    def answer(self, key: str, answered: Answered) -> str | None:
        """Settle the waiting trial; the reason when `key` is not the trial waiting (an
        answer sent twice, or from a page left open on an old trial)."""
        if self._waiting is None or self._waiting[0].key != key:
            return "no such trial is waiting (answered already?)"
        future = self._waiting[1]
        if not future.done():
            future.set_result(answered)
            self.answered += 1
        return None
