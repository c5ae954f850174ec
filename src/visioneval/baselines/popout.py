"""`popout`: a classical image-processing baseline that finds the odd object.

1. Decode; the background is the most common colour (5 bits per channel).
2. Visual Referring: the largest pure-red component is the box; its pixels become
   background, and its interior holds the target.
3. Objects are the 8-connected components of pixels away from the background colour.
4. Per object: mean colour, log area, and principal-axis angle from second moments. The
   angle counts only as far as the objects are elongated (a disc or square has no axis);
   when the distractors are near-isotropic, the box fill and aspect stand in for the pose.
5. Per feature, each object's distance from the median, in robust units (1.4826 x the median
   distance, floored at a just-noticeable difference so identical distractors do not turn
   pixel noise into huge scores).
6. Detection: the feature whose most deviant object deviates most. Referring (a bbox in the
   prompt) and Visual Referring: the feature in which the target deviates most.
7. "Is one object different from the others? Answer yes or no.": yes when some object
   deviates beyond the floor (a robust score above 1) in some feature. One feature at a
   time, as a pure feature search: a target defined only by a conjunction of two features
   among distractors that share each of them does not stand out (Treisman & Gelade 1980).

Anything that cannot be read or segmented answers the prompt's first class. An image
beyond `images.MAX_DECODE_PIXELS` is not decoded at all: TooManyPixels, which the builtin
backend turns into the sample's error (a run never decodes a decompression bomb).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from visioneval.baselines.prompt_reading import bbox, mentions_red_box, vocabulary
from visioneval.io.images import TooManyPixels, open_to_decode

FEATURES = ("orientation", "color", "size")
FLOOR = {"color": 12.0, "size": 0.08, "orientation": 5.0}  # RGB units, log area, degrees
FOREGROUND = 30  # max channel difference from the background that makes a pixel an object
PRESENT = 1.0  # robust score beyond which an object stands out (the yes/no question)
_YES_NO = re.compile(r"\banswer yes or no\b", re.IGNORECASE)
MIN_ELONGATION = 0.2  # below this (1 - minor/major variance) an object has no usable axis

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels


@dataclass
class Objects:
    """Per-object measurements, one entry per connected component kept."""

    centre: np.ndarray  # (n, 2) x, y
    colour: np.ndarray  # (n, 3) mean RGB
    log_area: np.ndarray  # (n,)
    angle: np.ndarray  # (n,) principal axis, degrees in [0, 180)
    elongation: np.ndarray  # (n,) 1 - minor/major variance, 0 for a disc
    pose: np.ndarray  # (n, 2) box fill ratio and log box aspect (for isotropic shapes)


def answer(prompt: str, image: bytes) -> str:
    if _YES_NO.search(prompt):
        return _present(prompt, image)
    classes = vocabulary(prompt)
    known = [c for c in classes if c in FEATURES]
    if not known:
        return classes[0]
    scores = _readable_scores(prompt, image)
    if scores is None:
        return classes[0]
    return max(known, key=lambda f: scores[f])  # ties go to the earlier class


def _present(prompt: str, image: bytes) -> str:
    """yes / no: does some object stand out in some feature (step 7); an image that cannot
    be read shows nothing."""
    scores = _readable_scores(prompt, image)
    return "yes" if scores is not None and max(scores.values()) > PRESENT else "no"


def _readable_scores(prompt: str, image: bytes) -> dict[str, float] | None:
    """`_scores`, or None for an undecodable image (TooManyPixels is not an answer but the
    caller's error, so it goes on)."""
    try:
        return _scores(prompt, image)
    except TooManyPixels:
        raise
    except (OSError, ValueError):
        return None


def _scores(prompt: str, image: bytes) -> dict[str, float] | None:
    with open_to_decode(image, "popout's image") as opened:  # the size checked first
        rgb = np.asarray(opened.convert("RGB")).astype(np.int16)
    background = _background(rgb)
    box: Box | None = None
    if mentions_red_box(prompt):
        box = _erase_red_box(rgb, background)
    elif (norm := bbox(prompt)) is not None:
        h, w = rgb.shape[:2]
        box = (norm[0] * w, norm[1] * h, norm[2] * w, norm[3] * h)
    objects = _objects(rgb, background)
    if objects is None:
        return None
    z = _deviations(objects)
    if box is None:
        return {f: float(v.max()) for f, v in z.items()}
    target = _target(objects.centre, box)
    return {f: float(v[target]) for f, v in z.items()}


def _background(rgb: np.ndarray) -> np.ndarray:
    """Mean colour of the most common 15-bit colour bin (every 3rd pixel each way is plenty)."""
    pixels = rgb[::3, ::3].reshape(-1, 3).astype(np.int32)
    q = pixels >> 3
    code = (q[:, 0] << 10) | (q[:, 1] << 5) | q[:, 2]
    mode = np.bincount(code, minlength=1 << 15).argmax()
    return pixels[code == mode].mean(axis=0)


def _erase_red_box(rgb: np.ndarray, background: np.ndarray) -> Box | None:
    """Find the red outline (largest red component), paint it over, return its box."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    red = (r >= 200) & (g <= 70) & (b <= 70)
    labels, n = ndimage.label(red, structure=np.ones((3, 3)))
    if n == 0:
        return None
    largest = np.bincount(labels.ravel())[1:].argmax() + 1
    ys, xs = np.nonzero(labels == largest)
    rgb[red] = np.round(background).astype(rgb.dtype)
    return float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())


def _objects(rgb: np.ndarray, background: np.ndarray) -> Objects | None:
    """Segment and measure; None if fewer than three objects are found."""
    diff = np.abs(rgb - np.round(background).astype(rgb.dtype))
    fg = (diff[..., 0] > FOREGROUND) | (diff[..., 1] > FOREGROUND) | (diff[..., 2] > FOREGROUND)
    labels, n = ndimage.label(fg, structure=np.ones((3, 3)))
    if n < 3:
        return None
    ys, xs = np.nonzero(fg)
    idx, pixels = labels[ys, xs], rgb[ys, xs].astype(float)
    xs, ys = xs.astype(float), ys.astype(float)

    def total(weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(idx, weights, minlength=n + 1)[1:]

    area = total()
    keep = area >= max(4.0, 0.05 * np.median(area))  # drop specks and anti-aliasing crumbs
    if keep.sum() < 3:
        return None
    cx, cy = total(xs) / area, total(ys) / area
    vxx = total(xs * xs) / area - cx**2
    vyy = total(ys * ys) / area - cy**2
    vxy = total(xs * ys) / area - cx * cy
    colour = np.stack([total(pixels[:, c]) / area for c in range(3)], axis=1)
    angle, elongation = _axis(vxx, vyy, vxy)
    pose = _pose(labels, n, area)
    return Objects(np.stack([cx, cy], 1)[keep], colour[keep], np.log(area[keep]),
                   angle[keep], elongation[keep], pose[keep])


def _axis(vxx: np.ndarray, vyy: np.ndarray, vxy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal-axis angle (degrees, [0, 180)) and elongation from the covariance."""
    # Pixels are unit squares: add their own variance (1/12) so 1-px-wide bars stay sane.
    vxx, vyy = vxx + 1 / 12, vyy + 1 / 12
    angle = np.degrees(0.5 * np.arctan2(2 * vxy, vxx - vyy)) % 180.0
    spread = np.sqrt(((vxx - vyy) / 2) ** 2 + vxy**2)
    major, minor = (vxx + vyy) / 2 + spread, (vxx + vyy) / 2 - spread
    return angle, 1.0 - minor / np.maximum(major, 1e-9)


def _pose(labels: np.ndarray, n: int, area: np.ndarray) -> np.ndarray:
    """Box fill ratio and log box aspect: rotation-sensitive even for squares or triangles."""
    boxes = ndimage.find_objects(labels, n)
    out = np.zeros((n, 2))
    for i, sl in enumerate(boxes):
        h, w = sl[0].stop - sl[0].start, sl[1].stop - sl[1].start
        out[i] = area[i] / (h * w), np.log(w / h)
    return out


def _robust_z(distance: np.ndarray, floor: float) -> np.ndarray:
    """Distances from the median in robust units (1.4826 x median distance, floored)."""
    return distance / max(1.4826 * float(np.median(distance)), floor)


def _deviations(obj: Objects) -> dict[str, np.ndarray]:
    colour = np.linalg.norm(obj.colour - np.median(obj.colour, axis=0), axis=1)
    size = np.abs(obj.log_area - np.median(obj.log_area))
    return {"orientation": _orientation_z(obj),
            "color": _robust_z(colour, FLOOR["color"]),
            "size": _robust_z(size, FLOOR["size"])}


def _orientation_z(obj: Objects) -> np.ndarray:
    typical = float(np.median(obj.elongation))
    if typical < MIN_ELONGATION:  # discs, squares, equilateral triangles: no axis to compare
        pose = obj.pose - np.median(obj.pose, axis=0)
        return np.maximum(_robust_z(np.abs(pose[:, 0]), 0.06),
                          _robust_z(np.abs(pose[:, 1]), 0.12))
    # Mean axis from doubled angles (axes are 180-periodic), weighted by elongation.
    doubled = np.exp(2j * np.radians(obj.angle)) * obj.elongation
    mean = np.degrees(np.angle(doubled.sum())) / 2
    diff = np.abs((obj.angle - mean + 90.0) % 180.0 - 90.0)
    # An object's own axis is only as trustworthy as it is elongated.
    trust = np.clip(np.minimum(obj.elongation, typical) / typical, 0.0, 1.0)
    return _robust_z(diff * trust, FLOOR["orientation"])


def _target(centre: np.ndarray, box: Box) -> int:
    """The object whose centre lies in the box (nearest the box centre if several or none)."""
    x0, y0, x1, y1 = box
    inside = ((centre[:, 0] >= x0) & (centre[:, 0] <= x1)
              & (centre[:, 1] >= y0) & (centre[:, 1] <= y1))
    dist = np.hypot(centre[:, 0] - (x0 + x1) / 2, centre[:, 1] - (y0 + y1) / 2)
    return int(np.argmin(np.where(inside, dist, dist + 1e6)))
