"""Psychophysics stimuli: parameters carried in the PNG, magnitudes measured from the pixels
(CIEDE2000 of interior colours, orientation from second moments, area from coverage), the
layout, conjunction and target-absent arrays, and byte-identical datasets per seed."""

from __future__ import annotations

import io
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image
from scipy import ndimage

from visioneval.benchmarks.psychophysics import colour
from visioneval.benchmarks.psychophysics.dataset import DEFAULT_LEVELS, Design, write_dataset
from visioneval.benchmarks.psychophysics.params import CONJUNCTION, read_params
from visioneval.benchmarks.psychophysics.stimuli import (
    Trial,
    background,
    make_stimulus,
)


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def _blobs(png: bytes) -> tuple[np.ndarray, np.ndarray, int]:
    """(pixels, labels, count) of the objects: pixels that are not background."""
    pixels = _pixels(png)
    mask = (pixels != np.array(background())).any(axis=2)
    labels, count = ndimage.label(mask)
    return pixels, labels, count


def _target_label(stimulus, labels: np.ndarray) -> int:
    x0, y0, x1, y1 = stimulus.params.target_box
    return int(labels[round((y0 + y1) / 2), round((x0 + x1) / 2)])


def _interior(pixels: np.ndarray, labels: np.ndarray, label: int) -> np.ndarray:
    """The most common colour of an object: its interior, untouched by anti-aliasing."""
    values, counts = np.unique(pixels[labels == label], axis=0, return_counts=True)
    return values[np.argmax(counts)]


def _shape(pixels, labels, label, ink) -> tuple[float, float]:
    """(area in px, orientation in degrees counter-clockwise) from coverage-weighted
    moments; coverage = how far a pixel moved from the background towards the ink."""
    bg = np.array(background(), dtype=float)
    ys, xs = np.nonzero(labels == label)
    cover = np.clip(np.abs(pixels[ys, xs] - bg).sum(1) / np.abs(ink - bg).sum(), 0, 1)
    area = cover.sum()
    mx, my = (cover * xs).sum() / area, (cover * ys).sum() / area
    mu20 = (cover * (xs - mx) ** 2).sum()
    mu02 = (cover * (ys - my) ** 2).sum()
    mu11 = (cover * (xs - mx) * (ys - my)).sum()
    return float(area), -math.degrees(0.5 * math.atan2(2 * mu11, mu20 - mu02))


def _other_label(labels, count, target) -> int:
    return next(i for i in range(1, count + 1) if i != target)


def test_the_png_carries_its_parameters():
    stim = make_stimulus(Trial("detection", "size", 0.3, 12, seed=5))
    params = read_params(stim.png)
    assert params == stim.params
    assert (params.experiment, params.feature, params.level, params.unit, params.set_size,
            params.target_present, params.seed) == ("detection", "size", 0.3,
                                                    "log_area_ratio", 12, True, 5)
    assert params.target_box is not None


def test_a_png_without_parameters_is_one_clear_error():
    buf = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buf, format="PNG")
    with pytest.raises(ValueError, match="no 'visioneval' text chunk"):
        read_params(buf.getvalue())


def _with_chunks(png: bytes, *chunks: tuple[str, str], after: bool = False,
                 compressed: bool = False, international: bool = False) -> bytes:
    """The stimulus saved again with more text chunks (before the image data, or after it:
    Pillow writes a chunk list given as `pnginfo` before; one is moved after by hand)."""
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    for key, text in chunks:
        if international:
            info.add_itxt(key, text, zip=compressed)
        else:
            info.add_text(key, text, zip=compressed)
    buf = io.BytesIO()
    Image.open(io.BytesIO(png)).save(buf, format="PNG", pnginfo=info)
    data = buf.getvalue()
    if not after:
        return data
    start = data.index(b"IDAT") - 4  # the first chunk after IHDR and the texts: move texts
    first_text = min(data.index(k) - 4 for k in (b"tEXt", b"zTXt", b"iTXt") if k in data)
    texts, rest = data[first_text:start], data[start:]
    end = rest.index(b"IEND") - 4
    return data[:first_text] + rest[:end] + texts + rest[end:]


def test_the_parameters_are_read_without_reading_other_chunks_or_pixels():
    import time
    import tracemalloc

    stim = make_stimulus(Trial("detection", "size", 0.3, 12, seed=5))
    junk = ("comment", "x" * 20_000_000)  # a 20 MB text chunk beside the parameters
    for after in (False, True):
        png = _with_chunks(stim.png, ("visioneval", stim.params.text()), junk, after=after)
        tracemalloc.start()
        started = time.perf_counter()
        assert read_params(png) == stim.params
        took, peak = time.perf_counter() - started, tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 1_000_000 and took < 0.05, (after, peak, took)


@pytest.mark.parametrize(("compressed", "international"), [(True, False), (False, True),
                                                          (True, True)])
def test_compressed_and_international_text_chunks_read_as_pillow_reads_them(
        compressed, international):
    stim = make_stimulus(Trial("detection", "size", 0.3, 12, seed=5))
    png = _with_chunks(stim.png, ("visioneval", stim.params.text()), compressed=compressed,
                       international=international)
    assert Image.open(io.BytesIO(png)).text["visioneval"] == stim.params.text()
    assert read_params(png) == stim.params


@pytest.mark.parametrize("compressed", [False, True])
def test_a_parameters_chunk_over_the_cap_is_one_line_before_it_is_read(compressed):
    stim = make_stimulus(Trial("detection", "size", 0.3, 12, seed=5))
    png = _with_chunks(stim.png, ("visioneval", "x" * 5_000_000), compressed=compressed)
    with pytest.raises(ValueError, match="over") as caught:
        read_params(png)
    assert "\n" not in str(caught.value) and "not read" in str(caught.value)


@pytest.mark.parametrize("level", [0.5, 1.61, 5.19, 16.7, 30.0])
def test_colour_difference_measured_from_pixels(level):
    stim = make_stimulus(Trial("detection", "color", level, 16, seed=int(level * 10)))
    pixels, labels, count = _blobs(stim.png)
    target = _target_label(stim, labels)
    other = _other_label(labels, count, target)
    t, d = _interior(pixels, labels, target), _interior(pixels, labels, other)
    assert abs(float(colour.delta_e(t[None], d[None])[0]) - level) < 0.5
    lab_t, lab_d = colour.lab_of(t[None])[0], colour.lab_of(d[None])[0]
    assert abs(lab_t[0] - colour.LIGHTNESS) < 1 and abs(lab_d[0] - colour.LIGHTNESS) < 1
    assert abs(np.hypot(*lab_t[1:]) - colour.CHROMA) < 1.5


def test_every_hue_at_the_rendered_lightness_and_chroma_is_in_srgb_gamut():
    assert colour.in_gamut(colour.lch_lab(np.arange(0, 360, 0.25)))
    assert not colour.in_gamut(colour.lch_lab(np.arange(0, 360, 0.25), 65.0, 45.0))


@pytest.mark.parametrize("level", [6.54, 23.7, 45.0])
def test_orientation_difference_measured_from_pixels(level):
    stim = make_stimulus(Trial("detection", "orientation", level, 9, seed=11))
    pixels, labels, count = _blobs(stim.png)
    target = _target_label(stim, labels)
    ink = _interior(pixels, labels, target)
    _, a_t = _shape(pixels, labels, target, ink)
    _, a_d = _shape(pixels, labels, _other_label(labels, count, target), ink)
    turned = (a_t - a_d + 90) % 180 - 90
    assert abs(turned - stim.params.sign * level) < 1.0


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_size_difference_measured_from_pixels_both_ways(seed):
    level = 0.572
    stim = make_stimulus(Trial("detection", "size", level, 9, seed=seed))
    pixels, labels, count = _blobs(stim.png)
    target = _target_label(stim, labels)
    ink = _interior(pixels, labels, target)
    area_t, _ = _shape(pixels, labels, target, ink)
    area_d, _ = _shape(pixels, labels, _other_label(labels, count, target), ink)
    assert abs(math.log(area_t / area_d) - stim.params.sign * level) < 0.05


def test_larger_and_smaller_targets_both_occur():
    signs = {make_stimulus(Trial("detection", "size", 0.2, 4, seed=s)).params.sign
             for s in range(12)}
    assert signs == {-1, 1}


@pytest.mark.parametrize("set_size", [4, 16, 64])
def test_set_size_objects_none_touching(set_size):
    """Size 1.0 (the largest default) with size jitter: still one component per object."""
    stim = make_stimulus(Trial("presence", "size", 1.0, set_size, spread=0.1, seed=set_size))
    _, _, count = _blobs(stim.png)
    assert count == set_size == len(stim.items)
    for i, a in enumerate(stim.items):
        for b in stim.items[i + 1:]:
            reach = 12 * (math.exp(a.log_area / 2) + math.exp(b.log_area / 2))
            assert math.hypot(a.x - b.x, a.y - b.y) > reach


def test_set_size_outside_the_range_is_refused():
    with pytest.raises(ValueError, match="set size 65"):
        make_stimulus(Trial("detection", "size", 0.1, 65))


@pytest.mark.parametrize("feature", ["orientation", "color", "size"])
def test_target_absent_arrays_have_no_odd_item(feature):
    stim = make_stimulus(Trial("presence", feature, 10.0 if feature != "size" else 0.5, 16,
                               target_present=False, seed=7))
    assert stim.params.target_box is None and not stim.params.target_present
    assert len({(i.angle, i.log_area, i.rgb) for i in stim.items}) == 1
    pixels, labels, count = _blobs(stim.png)
    assert count == 16
    interiors = {tuple(_interior(pixels, labels, k)) for k in range(1, count + 1)}
    assert len(interiors) == 1


def test_distractor_heterogeneity_stays_within_its_spread():
    stim = make_stimulus(Trial("detection", "orientation", 30.0, 32, spread=4.0, seed=2))
    distractors = [i.angle for i in stim.items if not i.target]
    assert max(distractors) - min(distractors) <= 8.0
    assert len(set(distractors)) == 31


@pytest.mark.parametrize("set_size", [4, 16, 64])
def test_a_conjunction_target_is_not_singled_out_by_one_feature(set_size):
    stim = make_stimulus(Trial("conjunction", CONJUNCTION, 20.0, set_size, seed=set_size))
    target = next(i for i in stim.items if i.target)
    others = [i for i in stim.items if not i.target]
    assert any(o.rgb == target.rgb for o in others)
    assert any(o.angle == target.angle for o in others)
    assert not any(o.rgb == target.rgb and o.angle == target.angle for o in others)
    absent = make_stimulus(Trial("conjunction", CONJUNCTION, 20.0, set_size,
                                 target_present=False, seed=set_size))
    kinds = {(i.rgb, i.angle) for i in absent.items}
    assert len(kinds) == 2 and (target.rgb, target.angle) not in kinds


def test_default_levels_are_log_spaced_from_chance_to_ceiling():
    for feature, (low, high) in {"orientation": (0.5, 45.0), "color": (0.5, 30.0),
                                 "size": (0.02, 1.0)}.items():
        levels = np.array(DEFAULT_LEVELS[feature])
        assert levels[0] == low and levels[-1] == high
        ratios = levels[1:] / levels[:-1]
        assert np.allclose(ratios, ratios[0], rtol=0.02)


@pytest.mark.slow
def test_the_same_seed_writes_the_same_bytes(tmp_path):
    design = Design(levels={"orientation": (2.0, 20.0), "color": (3.0,), "size": (0.3,),
                            CONJUNCTION: (20.0,)}, set_sizes=(4,), trials=2,
                    setsize_sizes=(4, 8), pool_levels={"orientation": (2.0, 20.0)},
                    pool_trials=2)
    counts = write_dataset(tmp_path / "a", design, seed=9)
    write_dataset(tmp_path / "b", design, seed=9)
    write_dataset(tmp_path / "c", design, seed=10)
    assert counts == {"detection": 8, "presence": 8, "conjunction": 2, "setsize": 12,
                      "heterogeneity": 6, "detection-pool": 4}
    for experiment in counts:
        name = f"{experiment}/shard_00000.parquet"
        a = (tmp_path / "a" / name).read_bytes()
        assert a == (tmp_path / "b" / name).read_bytes()
        assert a != (tmp_path / "c" / name).read_bytes()
    table = pq.read_table(tmp_path / "a" / "presence" / "shard_00000.parquet").to_pylist()
    assert len({r["id"] for r in table}) == len(table)
    assert [r["answer"] for r in table[:2]] == ["yes", "no"]
    for r in table:
        params = read_params(r["image"]["bytes"])
        assert params.model_dump() == {k: r[k] for k in params.model_dump()} | {
            "target_box": params.target_box}
        assert r["target_box"] == (list(params.target_box) if params.target_box else None)
