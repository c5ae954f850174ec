"""The contrast-detection stimulus and question. A 512 x 256 image, two 256-px halves of
mid-grey; a vertical Gabor patch (`stimuli.gabor`: a sine grating under a Gaussian
envelope, in linear light) in the middle of one half, the other half blank. Both halves
are dithered in linear light (noisy-bit, `stimuli.srgb.to_codes`) around a background
halfway in luminance between codes 128 and 129, so every pixel of both halves takes one of
the two codes at random and the blank half has the same noise as the patch's: only the
grating's structure tells them apart, below one code step too.

Forced choice, "left or right?" (chance 0.5); one curve per spatial frequency, in cycles
per image width (it survives a provider's uniform rescaling), its threshold the Michelson
contrast at 75% correct and its sensitivity 1 / threshold; the five sensitivities together
give the contrast sensitivity function (`csf.py`, docs/contrast.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from visioneval.benchmarks.contrast import csf
from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.paradigm import (
    Condition,
    Drawn,
    HumanValue,
    Paradigm,
    Reader,
    Scale,
    Summary,
)
from visioneval.paradigms.trial import Trial
from visioneval.stimuli.canvas import png_bytes
from visioneval.stimuli.gabor import gabor
from visioneval.stimuli.srgb import decode, encode, smallest_contrast, to_codes

WIDTH, HEIGHT = 512, 256  # px
HALF = WIDTH // 2  # each side, px
SIGMA = 32.0  # the envelope's standard deviation, px: 4σ from the patch's centre to its half's edge
FREQUENCIES = (8, 16, 32, 64, 128)  # cycles per image width: 1/64 to 1/4 cycles/px
CONTRASTS = (0.63, 1.0, 1.6, 2.5, 4.0, 6.3, 10.0, 16.0, 25.0, 40.0, 63.0, 100.0)
"""% Michelson: 0.2 log units apart (the R5 preferred numbers), the first three below one
8-bit step (docs/contrast.md, "The design", has the designs measured against it)."""
TRIALS = 12  # 12 levels x 12 = 144 trials per frequency, 720 for a CSF
BACKGROUND = float((decode(128) + decode(129)) / 2)  # linear luminance, between two codes
STEP = smallest_contrast(128).michelson
"""The smallest sinusoid an undithered 8-bit image can draw around mid-grey (codes 127 to
129): 1.69% Michelson. Below it the grating exists only as an average over dithered
pixels."""
SIDES = ("left", "right")
QUESTION = ("The image has a left half and a right half. One half shows a patch of faint "
            "stripes on grey; the other half is plain grey. Which half has the stripes? "
            "Answer with one word.\nOptions: left, right.")


def name_of(cycles: int) -> str:
    return f"f{cycles}"


def cycles_of(condition: str) -> float | None:
    """The frequency (cycles per image width) a condition's name says; None for another."""
    known = {name_of(f): float(f) for f in FREQUENCIES}
    return known.get(condition)


def code_factor() -> float:
    """A small luminance contrast at the background as a contrast of code values (what a
    model's front end that normalises codes linearly receives): the sRGB curve's local
    slope, about 1 / 2.2."""
    step = 1e-4
    codes = encode(BACKGROUND * (1 + step)) - encode(BACKGROUND * (1 - step))
    return float(codes / 2 / encode(BACKGROUND) / step)


class ContrastDetection(Paradigm):
    name = "contrast"
    title = "Contrast detection and the contrast sensitivity function"
    summary = ("Contrast detection: the Michelson contrast a model needs to tell which half "
               "holds a Gabor patch, per spatial frequency, and the contrast sensitivity "
               "function through them (peak, peak frequency, bandwidth).")
    kind = "choice"
    unit = "%"
    # The binomial interval covered 89-93% of true thresholds at this design, the fitted
    # one 93-96% (docs/contrast.md, "The design"); a model's answers to a level's images
    # (each its own phase) need not be binomial either.
    dispersion = "fitted"
    human = (
        HumanValue(
            "CSF peak frequency", "about 5 c/deg (3-5 c/deg)",
            "NRC 1985, Emergent Techniques for Assessment of Visual Performance, App. A "
            "(Campbell & Robson 1968's curves, its Fig. 10)",
            "sine-wave gratings, foveal, high photopic mean luminance (500 cd/m2); the peak "
            "moves lower as luminance falls",
            "c/deg needs the image's angular size: cycles per image / the degrees it spans. "
            "512 px at 40 px/deg (57 cm, 0.25 mm pixels) span 12.8 deg, so 5 c/deg is 64 "
            "cycles per image; set the peak in cycles per image beside that, for that view"),
        HumanValue(
            "CSF high-frequency cutoff", "about 60 c/deg",
            "NRC 1985, Emergent Techniques for Assessment of Visual Performance, App. A "
            "(Campbell & Robson 1968)",
            "as above: high photopic luminance, foveal",
            "at 40 px/deg, 60 c/deg would be 1.5 cycles/px, beyond any pixel grating's 0.5 "
            "(Nyquist): a person's cutoff is beyond what the image can show at that "
            "distance, and this design (at most 0.25 cycles/px) does not measure a model's"),
        HumanValue(
            "Peak contrast threshold", "well under 1% Michelson (sensitivity above 100)",
            "Campbell & Robson 1968, J Physiol 197:551-566 (curves as NRC 1985 App. A, "
            "Fig. 10 reprints them)",
            "foveal, high photopic luminance, long viewing, a display finer than 8 bits",
            "contrast has no unit, so 1 / the model's peak sensitivity compares directly; "
            "8-bit sRGB draws no sinusoid under 1.69% at mid-grey, so a person's threshold "
            "needs dithering (as here) or more bits"),
    )

    def conditions(self) -> tuple[Condition, ...]:
        scales = (Scale("% of code value", 1.0 * code_factor()),)
        return tuple(Condition(name_of(f), CONTRASTS, TRIALS, scales,
                               f"{f} cycles per image width: {f / WIDTH:.4g} cycles/px, a "
                               f"period of {WIDTH / f:g} px")
                     for f in FREQUENCIES)

    def draw(self, condition: Condition, level: float, index: int, seed: int) -> Drawn:
        cycles = cycles_of(condition.name)
        if cycles is None:
            raise ValueError(f"contrast has no condition {condition.name!r}")
        rng = np.random.default_rng(seed)
        side = SIDES[index % 2]  # each level's trials alternate sides: as many of each
        phase = float(rng.uniform(0.0, 360.0))
        patch = gabor(HALF, HEIGHT, cycles_per_image=cycles * HALF / WIDTH,
                      orientation_deg=0.0, phase_deg=phase, sigma_px=SIGMA,
                      contrast=level / 100, mean_luminance=BACKGROUND, rng=rng)
        blank = to_codes(np.full((HEIGHT, HALF), BACKGROUND), rng)  # dithered alike
        halves = (patch.codes, blank) if side == "left" else (blank, patch.codes)
        codes = np.concatenate(halves, axis=1)
        centre_x = HALF / 2 + (HALF if side == "right" else 0)
        trial = Trial(
            paradigm=self.name, condition=condition.name, kind=self.kind, level=level,
            unit=self.unit, options=SIDES, answer=side, seed=seed, width=WIDTH,
            height=HEIGHT, stimulus={
                "side": side, "centre_x": centre_x, "centre_y": HEIGHT / 2,
                "centre_x_share": centre_x / WIDTH, "cycles_per_image": cycles,
                "cycles_per_px": cycles / WIDTH, "period_px": WIDTH / cycles,
                "sigma_px": SIGMA, "sigma_share": SIGMA / WIDTH, "orientation_deg": 0.0,
                "phase_deg": phase, "contrast": level / 100,
                "contrast_shown": round(patch.contrast, 6),
                "code_contrast": round(patch.code_contrast, 6),
                "background_luminance": BACKGROUND, "below_one_code_step": level / 100 < STEP},
            rendering={"mixing": "linear light", "encoding": "sRGB 8-bit", "dithered": True,
                       "dither": "noisy-bit in linear light, both halves"})
        return Drawn(png_bytes(codes, trial.model_dump(), compress_level=1), trial, QUESTION)

    @property
    def reader(self) -> Reader:
        # Loaded by the builtin reader only: a run on a model never needs it.
        from visioneval.benchmarks.contrast.reader import read

        return read

    def summaries(self, curves: Sequence[object]) -> list[Summary]:
        fitted = [c for c in curves if isinstance(c, Fitted)]
        return [*peak_summaries(fitted), *sensitivity_summaries(fitted)]


PEAK = ("CSF peak sensitivity", "CSF peak frequency", "CSF bandwidth")
PEAK_UNITS = ("1/contrast", "cycles/image", "octaves")
FORM = ("log10 S(f) = log10 S_peak - log10(2)·((log10 f - log10 f_peak)/(B·log10(2)/2))², "
        "S = 1/threshold (contrast as a fraction), f in cycles per image width, B the full "
        "width at half maximum in octaves (Watson & Ahumada 2005's log-parabola as the "
        "quick CSF uses it, without its low-frequency truncation)")


def peak_summaries(fitted: Sequence[Fitted]) -> list[Summary]:
    """The CSF's peak sensitivity, peak frequency and bandwidth, each with its interval from
    refitting the CSF to the thresholds' bootstrap draws; absent with the reason when fewer
    than three frequencies reached a threshold or the sensitivities have no peak within the
    tested frequencies."""
    used = [(cycles_of(f.curve.condition), f) for f in fitted
            if f.curve.threshold is not None and cycles_of(f.curve.condition) is not None]
    tested = [cycles_of(f.curve.condition) for f in fitted
              if cycles_of(f.curve.condition) is not None]
    if len(used) < 3:
        return _absent(f"{len(used)} frequenc{'y' if len(used) == 1 else 'ies'} reached a "
                       "threshold; the log-parabola needs 3")
    frequencies = [float(c) for c, _ in used if c is not None]
    thresholds = [float(f.curve.threshold or 0.0) / 100 for _, f in used]
    draws = [np.asarray(f.draws, dtype=np.float64) / 100 for _, f in used]
    found = csf.fit(frequencies, thresholds, draws)
    curve = found.curve
    if curve is None:
        return _absent("the sensitivities do not rise to a peak and fall again: the fitted "
                       "parabola has no maximum")
    low, high = min(f for f in tested if f), max(f for f in tested if f)
    if not low <= curve.peak_frequency <= high:
        side = "below the lowest" if curve.peak_frequency < low else "beyond the highest"
        return _absent(f"the fitted peak ({curve.peak_frequency:.3g} cycles/image) lies "
                       f"{side} tested frequency: no peak was measured")
    refits = found.refits
    spans = [csf.interval(refits[:, i]) if len(refits) else None for i in range(3)]
    if spans[0] is not None:  # the peak: the basic interval, reflected about the fit in log
        spans[0] = csf.reflected(curve.peak_sensitivity, spans[0])
    if spans[1] is not None:  # a peak frequency beyond the tested ones is not measured
        spans[1] = (spans[1][0] if spans[1][0] >= low else -math.inf,
                    spans[1][1] if spans[1][1] <= high else math.inf)
    failed = (f" {found.failed} of {len(refits)} refits found no peak"
              f"{' (over 5%: no interval)' if spans[0] is None else ''}."
              if found.failed else "")
    values = (curve.peak_sensitivity, curve.peak_frequency, curve.bandwidth)
    peak_threshold = 1 / curve.peak_sensitivity
    notes = (f"the lowest threshold of the fitted CSF, {100 * peak_threshold:.3g}% Michelson"
             + (" (below the display's resolution: " + _step_words() + ")"
                if peak_threshold < STEP else "") + f"; from {len(used)} frequencies, "
             f"{sum(f.curve.n for _, f in used)} trials. Form: {FORM}." + failed,
             "where the fitted CSF is highest; an interval end beyond the tested "
             f"frequencies ({low:g} to {high:g}) is open.",
             "the CSF's full width at half maximum, in octaves of frequency.")
    return [Summary(name, unit, value, _open(span), note=note)
            for name, unit, value, span, note in zip(PEAK, PEAK_UNITS, values, spans, notes,
                                                     strict=True)]


def sensitivity_summaries(fitted: Sequence[Fitted]) -> list[Summary]:
    """Each frequency's sensitivity, 1 / its threshold, with the interval turned over."""
    out = []
    for f in fitted:
        cycles = cycles_of(f.curve.condition)
        if cycles is None:
            continue
        name = f"sensitivity at {cycles:g} cycles/image"
        threshold = f.curve.threshold
        if threshold is None:
            out.append(Summary(name, "1/contrast", None,
                               reason=f"{f.curve.condition}'s threshold was not reached"))
            continue
        band = f.curve.threshold_ci95
        span = None if band is None else (None if band[1] is None else 100 / band[1],
                                          None if band[0] is None else 100 / band[0])
        below = (f"; below the display's resolution ({_step_words()})"
                 if threshold / 100 < STEP else "")
        out.append(Summary(name, "1/contrast", 100 / threshold, span,
                           note=f"threshold {threshold:.3g}% Michelson{below}"))
    return out


def _step_words() -> str:
    return (f"one 8-bit step at mid-grey is {100 * STEP:.3g}%; dithering shows it on "
            "average")


def _open(span: tuple[float, float] | None) -> tuple[float | None, float | None] | None:
    if span is None:
        return None
    return (None if math.isinf(span[0]) else span[0], None if math.isinf(span[1]) else span[1])


def _absent(reason: str) -> list[Summary]:
    return [Summary(name, unit, None, reason=reason)
            for name, unit in zip(PEAK, PEAK_UNITS, strict=True)]
