"""The contract of a classic paradigm: its conditions (one psychometric curve each), the
levels and trials of its constant-stimuli design, how one stimulus is drawn, the question,
the fit's kind and criterion, a classical reader of the pixels (the builtin `reader`
model) and the human values published for it. A paradigm's benchmark folder fills these in;
everything else (dataset, scoring, fits, tables, report, compare) is shared."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from visioneval.paradigms.trial import Kind, Trial

if TYPE_CHECKING:
    from visioneval.stats.psychometric_fit import Dispersion


@dataclass(frozen=True)
class Scale:
    """Another unit the curve's figures are also shown in: value x `factor` (a Vernier
    offset in pixels as a percentage of the segment's length)."""

    unit: str
    factor: float


@dataclass(frozen=True)
class Condition:
    """One curve: its name, the levels of the constant-stimuli design (in the paradigm's
    unit, or `unit` when the condition has its own) and the trials at each, and other
    units its figures are also given in. `fitted` False: a control whose proportion
    correct per level is shown with no psychometric fit (a target alone, to show it is
    legible). `chart`: the title of the report chart a comparison's curve is drawn on, with
    the curves that share it (an illusion beside its control); empty: one chart for all.
    `rank`: the condition's place in a published ordering of the conditions by people's
    accuracy (1: the most accurate; equal ranks are ties), which a run's own order is set
    beside."""

    name: str
    levels: tuple[float, ...]
    trials: int
    scales: tuple[Scale, ...] = ()
    note: str = ""
    _: KW_ONLY
    unit: str = ""
    fitted: bool = True
    chart: str = ""
    rank: float | None = None


@dataclass(frozen=True)
class Drawn:
    """One stimulus: the PNG (its chunk holds `trial`) and the question asked of it."""

    png: bytes
    trial: Trial
    question: str


@dataclass(frozen=True)
class HumanValue:
    """A published human value: what it is, the value as published, the source and the
    conditions it was measured under, and what of it a model's figure can be set beside."""

    quantity: str
    value: str
    source: str
    conditions: str
    comparable: str


Reader = Callable[[str, bytes], str]
"""A classical reader of the pixels: (prompt, PNG bytes) -> the answer. A module-level
function, so worker processes can run it; it never reads the text chunk."""


@dataclass(frozen=True)
class Summary:
    """A paradigm-level figure made from several curves (an illusion's strength against its
    control, a contrast sensitivity function's peak): None with `reason` when it could not
    be computed."""

    name: str
    unit: str
    value: float | None
    ci95: tuple[float | None, float | None] | None = None
    reason: str | None = None
    note: str = ""
    headline: bool = True  # False: a list of runs shows the first curve's figure instead
    width: bool = False  # a width (a JND, a Weber fraction): an open low end reads "up to"


Interval = tuple[float | None, float | None]


@dataclass(frozen=True)
class OwnFit:
    """A condition's counts fitted by the paradigm's own model (`Paradigm.fit`), in place of
    its kind's fit: the model's figure `name` in `unit` (a Weber fraction) with its 95%
    interval, an end None where the tested levels cannot tell a smaller or a larger value
    apart; `fitted`, the model's parameter even when not reached (the chart draws it); the
    threshold every forced choice has (the level where the fitted ψ reaches the paradigm's
    criterion) with its interval; the lapse rate and dispersion; `function`, the form of ψ a
    chart draws (`core.figures.SigmoidFit`, its α being `fitted`); `about`, the model in one
    sentence; `draws`, the bootstrap's values of the figure."""

    name: str
    unit: str
    status: str
    reason: str | None
    value: float | None
    ci95: Interval | None
    fitted: float | None
    lapse: float | None
    threshold: float | None
    threshold_ci95: Interval | None
    dispersion: float | None
    dispersion_p: float | None
    function: str
    about: str
    draws: tuple[float, ...] = ()


class Paradigm(ABC):
    """One classic measurement. `unit` is the level's unit; `criterion` the proportion
    correct that defines a forced choice's threshold; `ranked_by`: whose ordering the
    conditions' `rank`s are (a citation)."""

    name: str
    title: str
    summary: str
    kind: Kind
    unit: str
    criterion: float = 0.75
    alternatives: int = 2  # a forced choice's options: γ = 1 / alternatives
    human: tuple[HumanValue, ...] = ()
    counted: str = "correct"  # what a comparison's curve counts: "'right'", "'top longer'"
    bridged: bool = False  # a forced choice's interval widened by bootstrap bridging
    # (stats.psychometric_fit.bridged_interval), where the design's percentile one covers
    # too little: measure with measure/paradigm_recovery.py
    dispersion: Dispersion = "binomial"
    """How a forced choice's bootstrap simulates counts: "binomial", or "fitted" (as
    dispersed as the fit's lack of fit says, `stats.psychometric_fit`), for a design whose
    binomial interval was measured to cover too little."""
    ranked_by: str = ""

    @abstractmethod
    def conditions(self) -> tuple[Condition, ...]:
        """The curves of the default design, in the order they are shown."""

    @abstractmethod
    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        """The `index`-th stimulus at `level` of `condition`, from its own `seed`."""

    @property
    @abstractmethod
    def reader(self) -> Reader:
        """The builtin `reader` model's answer function."""

    def fit(self, levels: Sequence[float], counted: Sequence[int], trials: Sequence[int],
            resamples: int, seed: int) -> OwnFit | None:
        """A condition's counts (at least two levels) fitted by the paradigm's own model,
        with `resamples` bootstrap refits; None (the default): its kind's fit."""
        return None

    def summaries(self, curves: Sequence[object]) -> list[Summary]:
        """Figures made from several curves (`curves`: the run's `fits.Fitted`, each a
        `metrics.Curve` and its bootstrap draws); none by default."""
        return []


@dataclass(frozen=True)
class Design:
    """What `visioneval data synth-NAME` writes: the paradigm's conditions (all by default)
    and trials per level (the paradigm's own by default)."""

    conditions: tuple[str, ...] = ()
    trials: int | None = None
