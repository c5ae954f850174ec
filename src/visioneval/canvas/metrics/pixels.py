"""Pixel fidelity (SSIM) and PSNR between the GT and generated renders.

CANVAS's recipe (kixlab/canvas `evaluation/visual/ssim_psnr.py@dd1da004`): both images in
RGB; if their sizes differ, both are resized with Pillow's default filter to (min width,
min height); pixels / 255; `structural_similarity(..., channel_axis=-1, data_range=1.0)`
and `peak_signal_noise_ratio(..., data_range=1.0)`; both rounded to 4 decimals and stored
as `pixel_fidelity` and `psnr`.

scikit-image's SSIM takes ~0.3 s on a 1024x768 RGB pair here (fifteen 7x7 uniform
filters), too slow for directory runs, so `ssim` below computes the same quantity (7x7
uniform window, sample covariance, K1 = 0.01, K2 = 0.03, the 3-pixel border cropped, mean
over pixels then over channels: Wang et al. 2004 as `skimage.metrics.structural_similarity`
implements it) from exact integer window sums of the 8-bit pixels, in ~60 ms. Only the
cropped interior enters the mean, so no padding is needed. PSNR comes from the exact
integer squared error. Both agree with scikit-image to ~1e-7 (tests compare them).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

from visioneval.canvas.metrics import Absent
from visioneval.io.images import ImageError, open_to_decode

WIN = 7
K1, K2 = 0.01, 0.03


class ImageFileError(ValueError):
    """An image that cannot be decoded; the message names the file."""


def load_rgb(path: str | Path) -> PILImage.Image:
    """The decoded image in RGB; ImageFileError naming the file if it does not open or
    holds more than `images.MAX_DECODE_PIXELS` (refused from its header, undecoded)."""
    try:
        with open_to_decode(Path(path), str(path)) as opened:
            opened.load()
            return opened if opened.mode == "RGB" else opened.convert("RGB")
    except ImageError as exc:
        raise ImageFileError(str(exc)) from None
    except Exception as exc:  # Pillow raises many types for corrupt files
        raise ImageFileError(f"{path}: not an image Pillow can open ({exc})") from None


def planes(gt: PILImage.Image, gen: PILImage.Image) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The R, G, B planes (contiguous uint8 arrays) of both images at a common size,
    resized as the reference does when sizes differ (Pillow's default filter, to the
    smaller width and the smaller height)."""
    if gt.size != gen.size:
        size = (min(gt.width, gen.width), min(gt.height, gen.height))
        gt, gen = gt.resize(size), gen.resize(size)
    return ([np.asarray(p) for p in gt.split()], [np.asarray(p) for p in gen.split()])


STRIP = 64  # output rows per strip: the working set stays in the CPU cache


class _Workspace:
    """Buffers for one strip of one image width, reused across strips, channels and
    images. Working in strips of 64 rows keeps every intermediate in cache, and reusing
    buffers avoids page-faulting fresh multi-MB arrays in on every allocation: together
    about 2x faster than whole-image arrays."""

    def __init__(self, w: int):
        rows, wv = STRIP + WIN - 1, w - WIN + 1

        def tmp(dtype):
            return (np.empty((rows - 1, w), dtype), np.empty((rows - 3, w), dtype),
                    np.empty((STRIP, w), dtype), np.empty((STRIP, w - 1), dtype),
                    np.empty((STRIP, w - 3), dtype))

        self.tmp16, self.tmp32 = tmp(np.uint16), tmp(np.int32)
        self.x, self.y, self.p = (np.empty((rows, w), np.int32) for _ in range(3))
        self.a, self.b, self.ab, self.cov, self.var = (np.empty((STRIP, wv), np.int32)
                                                       for _ in range(5))
        self.num, self.den, self.t = (np.empty((STRIP, wv), np.float32) for _ in range(3))


_WORKSPACES: dict[int, _Workspace] = {}


def _workspace(w: int) -> _Workspace:
    ws = _WORKSPACES.get(w)
    if ws is None:
        if len(_WORKSPACES) >= 4:  # bound the memory: keep the latest widths
            _WORKSPACES.pop(next(iter(_WORKSPACES)))
        ws = _WORKSPACES[w] = _Workspace(w)
    return ws


def _box7(src: np.ndarray, out: np.ndarray, tmp: tuple[np.ndarray, ...]) -> np.ndarray:
    """Sums over every full 7x7 window of a 2-D array (valid windows only) into `out`,
    by doubling along each axis: pairs, fours, then 4 + 2 + 1. (Whole-slice adds:
    numpy's cumsum down the rows is ~5x slower.) `tmp` holds the partial sums, in the
    dtype they need, and may be taller than needed; `src` may be narrower (uint8) and
    `out` wider."""
    h = src.shape[0]
    n = h - WIN + 1
    s2, s4, r = tmp[0][:h - 1], tmp[1][:h - 3], tmp[2][:n]
    s2h, s4h = tmp[3][:n], tmp[4][:n]
    np.add(src[:-1], src[1:], out=s2, dtype=s2.dtype)
    np.add(s2[:-2], s2[2:], out=s4)
    np.add(s4[:-3], s2[4:-1], out=r)
    r += src[6:]
    np.add(r[:, :-1], r[:, 1:], out=s2h)
    np.add(s2h[:, :-2], s2h[:, 2:], out=s4h)
    np.add(s4h[:, :-3], s2h[:, 4:-1], out=out, dtype=out.dtype)
    out += r[:, 6:]
    return out


def ssim(gt: list[np.ndarray], gen: list[np.ndarray]) -> float:
    """Mean SSIM over channels of two images given as lists of uint8 planes, as
    scikit-image computes it with channel_axis=-1 and data_range=1.0 on the images / 255."""
    return ssim_and_squared_error(gt, gen)[0]


def ssim_and_squared_error(gt: list[np.ndarray], gen: list[np.ndarray]) -> tuple[float, int]:
    """SSIM (as `ssim`) and the exact sum of squared 8-bit differences, in one pass."""
    if len(gt) != len(gen) or any(a.shape != b.shape for a, b in zip(gt, gen, strict=True)):
        raise ValueError("the two images differ in size or channels")
    h, w = gt[0].shape
    if h < WIN or w < WIN:
        raise ValueError(f"image too small for SSIM's 7x7 window ({w}x{h})")
    n = WIN * WIN
    # Window sums are kept in units of the 0..255 pixels, where a window mean is
    # sum / (255 n). Sums of x and y fit uint16 (49 * 255); sums of products and the
    # numerators n * sum(x^2) - sum(x)^2 fit int32: all exact. Only the final ratio is
    # float32 (relative error ~1e-7, far below the 4 decimals reported), with C1 and C2
    # rescaled to these units. Only var_x + var_y enters SSIM, so x^2 + y^2 is summed
    # as one map.
    k1 = np.float32((K1 * 255 * n) ** 2)
    k2 = np.float32((K2 * 255) ** 2 * n * (n - 1))
    ws = _workspace(w)
    hv, wv = h - WIN + 1, w - WIN + 1
    means = []
    sse = 0
    for xp_full, yp_full in zip(gt, gen, strict=True):
        total = 0.0
        for top in range(0, hv, STRIP):
            rows = min(STRIP, hv - top)  # output rows of this strip
            last = top + rows == hv
            xp = xp_full[top:top + rows + WIN - 1]
            yp = yp_full[top:top + rows + WIN - 1]
            a = _box7(xp, ws.a[:rows], ws.tmp16)  # uint16 partial sums, int32 result
            b = _box7(yp, ws.b[:rows], ws.tmp16)
            ab = np.multiply(a, b, out=ws.ab[:rows])
            p = ws.p[:len(xp)]
            np.multiply(xp, yp, out=p, dtype=np.int32)
            cov = _box7(p, ws.cov[:rows], ws.tmp32)
            cov *= n
            cov -= ab  # covariance numerator
            # Squared error over this strip's own rows (the last strip takes the rest).
            d = p[:len(xp) if last else rows]
            np.subtract(xp[:len(d)], yp[:len(d)], out=d, dtype=np.int32)
            d *= d
            sse += int(d.sum(dtype=np.int64))
            x, y = ws.x[:len(xp)], ws.y[:len(xp)]
            np.multiply(xp, xp, out=x, dtype=np.int32)
            np.multiply(yp, yp, out=y, dtype=np.int32)
            x += y
            var = _box7(x, ws.var[:rows], ws.tmp32)
            var *= n
            a *= a
            b *= b
            a += b  # sum(x)^2 + sum(y)^2
            var -= a  # variance numerators, summed
            num, den, t = ws.num[:rows], ws.den[:rows], ws.t[:rows]
            np.multiply(ab, 2, out=num, dtype=np.float32)
            num += k1
            np.multiply(cov, 2, out=t, dtype=np.float32)
            t += k2
            num *= t
            np.add(a, k1, out=den, dtype=np.float32)
            np.add(var, k2, out=t, dtype=np.float32)
            den *= t
            num /= den
            total += float(num.sum(dtype=np.float64))
        means.append(total / (hv * wv))
    return float(np.mean(means)), sse


def psnr_from_squared_error(sse: int, pixels: int) -> float:
    """10 log10(1 / MSE) on pixels / 255 (scikit-image's formula with data_range=1.0),
    from the exact integer squared error over `pixels` values. Infinite if sse = 0."""
    if sse == 0:
        return math.inf
    mse = sse / (pixels * 255.0 * 255.0)
    return 10.0 * math.log10(1.0 / mse)


def psnr(gt: list[np.ndarray], gen: list[np.ndarray]) -> float:
    return psnr_from_squared_error(ssim_and_squared_error(gt, gen)[1],
                                   gt[0].size * len(gt))


def pixel_metrics(gt: list[np.ndarray], gen: list[np.ndarray]) -> dict[str, float | Absent]:
    value, sse = ssim_and_squared_error(gt, gen)
    db = psnr_from_squared_error(sse, gt[0].size * len(gt))
    return {"pixel_fidelity": round(value, 4),
            "psnr": Absent("the images are identical, so PSNR is infinite")
            if math.isinf(db) else round(db, 4)}
