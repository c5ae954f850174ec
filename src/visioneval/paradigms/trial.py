"""One trial of a classic paradigm, as its stimulus PNG describes itself (the `visioneval`
text chunk) and its dataset row holds it, so that a reader of the file alone (the loopback
observer, a person's page, a later analysis) knows what was shown and what was asked.

Three kinds of question:
- "choice": a forced choice among `options` with one right `answer`; proportion correct
  rises from chance (1 / number of options) with `level` (a magnitude, > 0).
- "comparison": two options, one of which (`positive`) names the direction in which the
  signed `level` grows ("right" for a Vernier offset, the comparison for "which is
  longer?"); the share of `positive` answers runs from 0 to 1 through a point of subjective
  equality. `answer` is the physically right option, "" where there is none (level 0).
- "estimate": a number is asked (a percentage); `level` and `answer` are the true value
  and `options` the lowest and the highest answer the question allows ("0", "100"), so a
  reader of the file knows the range without the question."""

from __future__ import annotations

import json
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from visioneval.io.pngtext import read_model

Kind = Literal["choice", "comparison", "estimate"]
Geometry = dict[str, float | int | str | bool]


class Trial(BaseModel):
    """What one stimulus is and asks. `stimulus` holds the paradigm's own geometry (pixels
    of the written PNG, fractions of its width), so the file says everything it shows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paradigm: str
    condition: str
    kind: Kind
    level: float
    unit: str
    options: tuple[str, ...] = ()
    answer: str = ""
    positive: str = ""
    seed: int
    width: int
    height: int
    stimulus: Geometry = Field(default_factory=dict)
    rendering: Geometry | None = None  # written by the canvas: supersampling, dithering

    @property
    def chance(self) -> float | None:
        """The guess rate of a forced choice; None for the other kinds."""
        return 1 / len(self.options) if self.kind == "choice" and self.options else None

    def text(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))


def read_trial(png: bytes) -> Trial:
    """The trial a stimulus PNG carries; ValueError with one line if none."""
    return read_model(png, Trial, "a classic paradigm's stimulus")


def stimulus_seed(seed: int, *where: int) -> int:
    """A stimulus's own seed from the dataset's and its place in the design: independent
    streams per place (numpy's SeedSequence), the same bytes for the same seed."""
    return int(np.random.SeedSequence([seed, *where]).generate_state(1, np.uint64)[0] >> 1)
