"""A simulated observer for the psychophysics stimuli: it reads the parameters a stimulus
PNG carries (its `visioneval` text chunk) and answers as an observer with known
psychometric functions would, so the fits can be checked for recovering them.

Detection and set size (which feature differs, 3 alternatives): correct with probability
ψ(level) = γ + (1 − γ − λ)·F(level; α, β) with γ = 1/3 (Wichmann & Hill 2001), otherwise
one of the two wrong features, uniformly. Yes/no (presence, conjunction): an equal-variance
Gaussian observer (Macmillan & Creelman, "Detection Theory"): internal value ~ N(±d′/2, 1),
"yes" above the criterion c, so hits Φ(d′/2 − c) and false alarms Φ(−d′/2 − c).

A classic paradigm's stimulus (its chunk names a `paradigm` and a `kind`) is answered from
the curve named after the paradigm, or `paradigm/condition` first: a forced choice
("choice") is right with probability ψ(level) with γ = 1 / options, otherwise one of the
wrong options uniformly; a comparison answers its `positive` option with probability
λ + (1 − 2λ)·Φ((level − PSE)/σ), σ = JND / 0.674, the curve's three numbers being PSE, JND
and λ. A curve of the named function "weber" (`NAME=weber:W:LAPSE`) answers a forced choice
between two magnitudes whose level is their ratio (larger over smaller) as the standard
model of number and magnitude comparison does: right with probability
λ + (1 − 2λ)·Φ((r − 1)/(w·√(1 + r²))) (Pica et al. 2004; `stats.weber_fit`). An estimate
("estimate": a number asked, its `level` the true value, its two `options` the lowest and
highest answer allowed) is answered, with probability 1 − λ, as the true value plus a bias
and Gaussian noise of a known SD, rounded to a whole number as a person writes one and kept
within the allowed range, otherwise (a lapse) as a whole number drawn uniformly from the
range, the curve's three numbers being bias, SD and λ (`estimate_distribution` gives the
same answers' exact probabilities). A paradigm without a curve is answered at random (an
observer that sees nothing).

Reading the JSON keys here keeps the server free of the benchmark plugin. Each answer is
drawn from the stimulus's seed and the observer's seed: a rerun answers the same."""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from visioneval.io.pngtext import read_text
from visioneval.loopback.server import Answerer, Prompt
from visioneval.stats.psychometric import Sigmoid, psi
from visioneval.stats.weber_fit import weber_psi

FEATURES = ("orientation", "color", "size")
CHOICE = ("detection", "setsize")  # experiments asking which feature differs
DEFAULT_CURVES = "orientation=8:3:0.02,color=6:2.5:0.02,size=0.15:2:0.02"


FUNCTIONS = ("weber",)  # named functions a paradigm's curve may be given as


@dataclass(frozen=True)
class Curve:
    """One feature's psychometric function: threshold α, slope β, lapse rate λ; or, with a
    named `function` ("weber"), that function's parameter α (the Weber fraction w; β
    unused) and λ."""

    alpha: float
    beta: float
    lapse: float
    function: str = ""

    def text(self) -> str:
        """The curve as `--observer` takes it."""
        if self.function:
            return f"{self.function}:{self.alpha:g}:{self.lapse:g}"
        return f"{self.alpha:g}:{self.beta:g}:{self.lapse:g}"


@dataclass(frozen=True)
class Observer:
    curves: dict[str, Curve] = field(default_factory=dict)
    form: Sigmoid = "weibull"
    dprime: float = 1.5
    criterion: float = 0.0
    seed: int = 0

    def name(self) -> str:
        """The served identity: every parameter, so two observers never share a cache."""
        curves = ",".join(f"{k}={c.text()}" for k, c in sorted(self.curves.items()))
        return (f"observer[{curves};form={self.form};dprime={self.dprime:g};"
                f"criterion={self.criterion:g};seed={self.seed}]")

    def answer(self, stimulus: dict[str, Any]) -> str:
        rng = random.Random(f"{stimulus.get('seed')}:{self.seed}")
        if "paradigm" in stimulus and "kind" in stimulus:
            return self._paradigm(stimulus, rng)
        if stimulus.get("experiment") in CHOICE:  # the three-way question
            feature = str(stimulus.get("feature"))
            curve = self.curves.get(feature)
            guess = 1 / len(FEATURES)
            p = guess if curve is None else psi(float(stimulus.get("level", 0.0)), curve.alpha,
                                                curve.beta, guess, curve.lapse, self.form)
            if feature not in FEATURES or rng.random() < p:
                return feature
            return rng.choice([f for f in FEATURES if f != feature])
        mean = self.dprime / 2 if stimulus.get("target_present") else -self.dprime / 2
        return "yes" if rng.gauss(mean, 1.0) > self.criterion else "no"


    def _paradigm(self, trial: dict[str, Any], rng: random.Random) -> str:
        options = [str(o) for o in trial.get("options") or ()]
        if not options:
            return "I cannot tell."
        curve = (self.curves.get(f"{trial.get('paradigm')}/{trial.get('condition')}")
                 or self.curves.get(str(trial.get("paradigm"))))
        level = float(trial.get("level", 0.0))
        if curve is not None and curve.function and (
                curve.function != "weber" or trial.get("kind") != "choice"):
            curve = None  # a named function answers only the trials it is made for
        if trial.get("kind") == "estimate":
            try:
                low, high = (float(o) for o in options)
            except ValueError:
                return "I cannot tell."
            if curve is None:
                return str(rng.randint(math.ceil(low), math.floor(high)))
            return str(estimate_answer(level, curve, low, high, rng))
        if trial.get("kind") == "comparison":
            positive = str(trial.get("positive"))
            others = [o for o in options if o != positive] or options
            p = 0.5 if curve is None else curve.lapse + (1 - 2 * curve.lapse) * 0.5 * \
                math.erfc(-(level - curve.alpha) / (curve.beta / JND_Z) / math.sqrt(2.0))
            return positive if rng.random() < p else others[0]
        right = str(trial.get("answer"))
        wrong = [o for o in options if o != right]
        guess = 1 / len(options)
        if curve is None:
            p = guess
        elif curve.function == "weber":
            p = weber_psi(level, curve.alpha, curve.lapse)
        else:
            p = psi(level, curve.alpha, curve.beta, guess, curve.lapse, self.form)
        return right if not wrong or rng.random() < p else rng.choice(wrong)


def estimate_answer(true: float, curve: Curve, low: float, high: float,
                    rng: random.Random) -> int:
    """One estimate of `true`: bias + Gaussian noise (SD = the curve's second number),
    rounded half up to a whole number and clipped to [low, high]; a uniform whole number
    in the range with probability λ."""
    first, last = math.ceil(low), math.floor(high)
    if rng.random() < curve.lapse:
        return rng.randint(first, last)
    return min(max(math.floor(true + curve.alpha + rng.gauss(0.0, curve.beta) + 0.5),
                   first), last)


def estimate_distribution(true: float, curve: Curve, low: float, high: float
                          ) -> tuple[list[int], list[float]]:
    """Every whole-number answer `estimate_answer` can give and its exact probability: the
    Gaussian's mass rounding to it (the ends take the mass beyond them), mixed with the
    lapses' uniform share."""
    first, last = math.ceil(low), math.floor(high)
    answers = list(range(first, last + 1))
    mean, sd = true + curve.alpha, curve.beta

    def below(x: float) -> float:  # P(answer before rounding < x)
        return 0.5 * math.erfc(-(x - mean) / (sd * math.sqrt(2.0)))

    share = curve.lapse / len(answers)
    probabilities = []
    for a in answers:
        lower = 0.0 if a == first else below(a - 0.5)
        upper = 1.0 if a == last else below(a + 0.5)
        probabilities.append((1 - curve.lapse) * (upper - lower) + share)
    return answers, probabilities


JND_Z = 0.6744897501960817  # Φ⁻¹(0.75): a comparison curve's JND is 0.674σ
_PARADIGM_KEY = re.compile(r"[a-z][a-z0-9-]*(?:/[A-Za-z0-9_.+-]+)?")


def parse_curves(text: str) -> dict[str, Curve]:
    """`orientation=8:3:0.02,vernier=0:1:0.02` -> curves; ValueError naming the bad part.
    A visual-search feature's numbers are threshold, slope and lapse; a paradigm's
    (`vernier`, `crowding/flanked`) are its forced choice's threshold, slope and lapse, its
    comparison's PSE, JND and lapse, its estimate's bias, SD and lapse, or a named
    function's: `weber:W:LAPSE`."""
    curves = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, numbers = part.partition("=")
        values = numbers.split(":")
        if values[0] in FUNCTIONS and name not in FEATURES:
            curves[name] = _named(part, values)
            continue
        feature = name in FEATURES
        if not (feature or _PARADIGM_KEY.fullmatch(name)) or len(values) != 3:
            raise ValueError(f"--observer {part!r}: write FEATURE=THRESHOLD:SLOPE:LAPSE with "
                             f"FEATURE one of {', '.join(FEATURES)}, or PARADIGM=A:B:LAPSE "
                             "(PARADIGM or PARADIGM/CONDITION)")
        try:
            alpha, beta, lapse = (float(v) for v in values)
        except ValueError:
            raise ValueError(f"--observer {part!r}: the three values are numbers") from None
        if not all(math.isfinite(v) for v in (alpha, beta, lapse)) or beta <= 0 or \
                (feature and alpha <= 0) or not 0 <= lapse < (2 / 3 if feature else 0.5):
            raise ValueError(f"--observer {part!r}: " + (
                "threshold and slope > 0, lapse in [0, 2/3)" if feature else
                "the second value > 0 (slope, JND or SD), lapse in [0, 0.5)"))
        curves[name] = Curve(alpha, beta, lapse)
    return curves


def _named(part: str, values: list[str]) -> Curve:
    """`weber:W:LAPSE` -> its curve; ValueError naming the bad part."""
    if not _PARADIGM_KEY.fullmatch(part.partition("=")[0]) or len(values) != 3:
        raise ValueError(f"--observer {part!r}: write PARADIGM=weber:W:LAPSE (PARADIGM or "
                         "PARADIGM/CONDITION)")
    try:
        w, lapse = float(values[1]), float(values[2])
    except ValueError:
        raise ValueError(f"--observer {part!r}: W and LAPSE are numbers") from None
    if not (math.isfinite(w) and w > 0 and 0 <= lapse < 0.5):
        raise ValueError(f"--observer {part!r}: the Weber fraction W > 0, lapse in [0, 0.5)")
    return Curve(w, 1.0, lapse, values[0])


def stimulus_text(png: bytes) -> dict[str, Any] | None:
    """The `visioneval` JSON a stimulus PNG carries, or None (none, or over the chunk cap:
    read by its header, never its pixels)."""
    try:
        text = read_text(png)
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def answer_observer(observer: Observer) -> Answerer:
    """The server's answer function for `observer` (named by its parameters)."""

    def observe(prompt: Prompt) -> str:
        png = prompt.last_image()
        stimulus = stimulus_text(png) if png else None
        if stimulus is None:
            return "I see no psychophysics stimulus parameters in this image."
        return observer.answer(stimulus)

    observe.__name__ = observer.name()
    return observe
