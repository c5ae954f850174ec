"""Stimuli as images: the sRGB transfer function both ways, the smallest contrast 8 bits hold
(IEC 61966-2-1's curve, the table of docs/stimuli.md recomputed), sub-pixel geometry that
survives anti-aliasing in linear light, dithered Gabor patches below one code step, and the
parameters carried in the PNG."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from visioneval.io.pngtext import read_text
from visioneval.stimuli.canvas import Canvas
from visioneval.stimuli.gabor import gabor
from visioneval.stimuli.srgb import (
    CODES,
    decode,
    encode,
    representable,
    smallest_contrast,
    to_codes,
)

GREY = float(decode(128))


def test_every_code_survives_decoding_and_encoding():
    assert (to_codes(decode(CODES)) == CODES).all()
    assert np.abs(encode(decode(CODES)) - CODES).max() < 1e-9
    assert decode(0) == 0 and decode(255) == pytest.approx(1.0)
    assert np.all(np.diff(decode(CODES)) > 0)


def test_the_curve_is_iec_61966_2_1s():
    """Both pieces, by hand: the linear toe below V = 0.04045 and the 2.4 power above."""
    assert decode(10) == pytest.approx(10 / 255 / 12.92)
    assert decode(128) == pytest.approx(((128 / 255 + 0.055) / 1.055) ** 2.4)
    assert decode(128) == pytest.approx(0.2159, abs=1e-4)
    assert decode(188) == pytest.approx(0.503, abs=1e-3)  # about half the white's luminance


@pytest.mark.parametrize(("code", "michelson", "weber"), [
    (64, 0.0308, 0.0310), (128, 0.0169, 0.0170), (188, 0.0119, 0.0119), (200, 0.0112, 0.0113)])
def test_the_smallest_contrast_of_one_code_step(code, michelson, weber):
    step = smallest_contrast(code)
    assert step.michelson == pytest.approx(michelson, abs=1e-4)
    assert step.weber == pytest.approx(weber, abs=1e-4)


def test_the_step_is_larger_in_luminance_than_in_code():
    """At 128 a ±1-code grating is 1/128 = 0.78% in code values, about 2.2 times less than
    in light: the local slope of the curve."""
    ratio = smallest_contrast(128).michelson / (1 / 128)
    assert 2.1 < ratio < 2.3


def test_a_contrast_below_one_step_is_not_representable():
    assert representable(0.017, 128) and not representable(0.0168, 128)
    assert representable(0.012, 188) and not representable(0.005, 188)
    with pytest.raises(ValueError, match="1 to 254"):
        smallest_contrast(255)


def _centroid(canvas: Canvas, row: int) -> float:
    """The x of the centroid of light a dark line takes from the background, in pixels, on
    one row of the luminance the 8-bit codes decode to."""
    taken = canvas.background - decode(canvas.codes()[row])
    return float((taken * (np.arange(canvas.width) + 0.5)).sum() / taken.sum())


@pytest.mark.parametrize("supersample", [1, 4, 8, 16])
def test_a_line_lands_where_asked_to_a_fiftieth_of_a_pixel(supersample):
    def drawn(x: float) -> Canvas:
        canvas = Canvas(24, 12, GREY, supersample=supersample)
        canvas.line((x, 1.0), (x, 11.0), thickness=1.0, luminance=0.0)
        return canvas

    for x in (10.25, 10.5, 10.8, 11.0):
        assert _centroid(drawn(x), 6) == pytest.approx(x, abs=0.02)
        assert _centroid(drawn(x + 0.1), 6) - _centroid(drawn(x), 6) == pytest.approx(
            0.1, abs=0.02)


def test_an_oblique_line_keeps_its_place():
    """A line at 30 degrees from vertical, 0.1 px to the right: the rows' centroids move
    by 0.1 px too, on average over the rows away from its ends."""
    def centroids(shift: float) -> np.ndarray:
        canvas = Canvas(40, 40, GREY)
        canvas.line((10.3 + shift, 2.0), (10.3 + shift + 36 * np.tan(np.pi / 6), 38.0),
                    thickness=1.5, luminance=0.0)
        return np.array([_centroid(canvas, row) for row in range(8, 32)])

    rows = np.arange(8, 32) + 0.5
    expected = 10.3 + (rows - 2.0) * np.tan(np.pi / 6)
    assert np.abs(centroids(0.0) - expected).mean() < 0.03
    assert (centroids(0.1) - centroids(0.0)).mean() == pytest.approx(0.1, abs=0.02)


def test_a_half_covered_pixel_holds_half_the_luminance_step():
    """An edge through the middle of a pixel: white over black is 0.5 in light, code 188,
    where mixing codes would give 128 (a fifth of white's light, a darker edge)."""
    canvas = Canvas(8, 8, 0.0)
    canvas.polygon([(0.0, 0.0), (4.5, 0.0), (4.5, 8.0), (0.0, 8.0)], luminance=1.0)
    assert canvas.luminance[4, 4] == pytest.approx(0.5, abs=1e-9)
    assert canvas.codes()[4, 4] == 188 and canvas.codes()[4, 3] == 255
    grey = Canvas(8, 8, GREY)
    grey.polygon([(0.0, 0.0), (4.5, 0.0), (4.5, 8.0), (0.0, 8.0)], luminance=1.0)
    assert grey.luminance[4, 4] == pytest.approx((GREY + 1.0) / 2, abs=1e-9)


def test_a_disc_and_a_ring_hold_their_area_in_light():
    canvas = Canvas(64, 64, 0.0)
    canvas.disc((30.3, 31.7), 10.0, 1.0)
    assert canvas.luminance.sum() == pytest.approx(np.pi * 100, rel=2e-3)
    canvas = Canvas(64, 64, 0.0)
    canvas.ring((30.3, 31.7), 20.0, 2.0, 1.0)
    assert canvas.luminance.sum() == pytest.approx(np.pi * (21 ** 2 - 19 ** 2), rel=2e-3)


def test_shapes_outside_the_canvas_or_out_of_range_are_refused_or_cut():
    canvas = Canvas(10, 10, 0.5)
    canvas.disc((-50.0, -50.0), 3.0, 1.0)
    assert (canvas.luminance == 0.5).all()
    with pytest.raises(ValueError, match="from 0 to 1"):
        canvas.line((1, 1), (5, 5), 1.0, luminance=255)


def _fitted_amplitude(images: np.ndarray, shape_row: np.ndarray) -> float:
    """The amplitude of the carrier in the mean luminance profile over images and rows,
    relative to the mean (least squares on offset + A shape)."""
    profile = images.mean(axis=(0, 1))
    design = np.stack([np.ones_like(shape_row), shape_row], axis=1)
    (offset, amplitude), *_ = np.linalg.lstsq(design, profile, rcond=None)
    return float(amplitude / offset)


def test_a_dithered_gabor_below_one_step_keeps_its_contrast_on_average():
    """0.5% at mid-grey, under a third of one code step (1.69%): undithered it is a flat
    grey; dithered, the mean over 40 images and 32 rows holds 0.5%. Vertical stripes under
    an envelope wide enough that every row of the middle has the whole carrier."""
    def drawn(seed: int | None) -> np.ndarray:
        rng = None if seed is None else np.random.default_rng(seed)
        patch = gabor(64, 64, cycles_per_image=4, orientation_deg=0, phase_deg=0,
                      sigma_px=1e6, contrast=0.005, mean_luminance=GREY, rng=rng)
        return decode(patch.codes[16:48])

    x = np.arange(64) + 0.5 - 32
    carrier = np.cos(2 * np.pi * 4 / 64 * x)
    dithered = np.stack([drawn(seed) for seed in range(40)])
    assert _fitted_amplitude(dithered, carrier) == pytest.approx(0.005, abs=0.001)
    assert abs(_fitted_amplitude(drawn(None)[None], carrier)) < 1e-12


def test_a_gabor_reports_the_contrast_its_codes_hold():
    asked = dict(cycles_per_image=8, orientation_deg=30, phase_deg=90, sigma_px=20,
                 mean_luminance=GREY)
    faint = gabor(128, 128, contrast=0.005, **asked)
    assert abs(faint.contrast) < 1e-12 and (faint.codes == 128).all()
    seen = gabor(128, 128, contrast=0.005, rng=np.random.default_rng(3), **asked)
    assert seen.contrast == pytest.approx(0.005, abs=0.0015)
    strong = gabor(128, 128, contrast=0.2, **asked)
    assert strong.contrast == pytest.approx(0.2, abs=0.002)
    assert strong.code_contrast == pytest.approx(0.2 / 2.2, rel=0.1)
    with pytest.raises(ValueError, match="cycles/px"):
        gabor(64, 64, contrast=0.1, **{**asked, "cycles_per_image": 40})


def test_a_gabors_stripes_turn_with_its_orientation():
    """At 0 degrees the stripes are vertical (columns constant), at 90 horizontal."""
    asked = dict(cycles_per_image=4, phase_deg=0, sigma_px=1e6, contrast=0.5,
                 mean_luminance=0.4)
    vertical = gabor(32, 32, orientation_deg=0, **asked).luminance
    horizontal = gabor(32, 32, orientation_deg=90, **asked).luminance
    assert np.ptp(vertical, axis=0).max() < 1e-6 and np.ptp(vertical[0]) > 0.35
    assert np.allclose(horizontal, vertical.T)


def test_the_png_carries_its_parameters():
    canvas = Canvas(32, 16, GREY, supersample=4)
    canvas.line((10.25, 2.0), (10.25, 14.0), 1.0, 0.0)
    params = {"paradigm": "vernier", "offset_px": 0.25, "offset_of_width": 0.25 / 32}
    png = canvas.to_png(params)
    written = json.loads(read_text(png) or "")
    assert written == {**params, "rendering": {
        "supersample": 4, "mixing": "linear light", "encoding": "sRGB 8-bit",
        "dithered": False}}
    image = Image.open(io.BytesIO(png))
    assert image.mode == "L" and image.size == (32, 16)
    assert (np.asarray(image) == canvas.codes()).all()
    with pytest.raises(ValueError, match="rendering"):
        canvas.to_png({"rendering": "mine"})
