"""The variants a run can ask for (`--variant NAME[:ARGS]`), what each does to a prompt,
and how the flag's text becomes them.

A variant changes a sample's messages only: the target, the scoring and the metrics are the
benchmark's own. The image variants decode the stored image once (`io.images.open_to_decode`
guards its size) and write new bytes; what they did, and with which Pillow, is recorded in
run.json (`VariantInfo`).
"""

from __future__ import annotations

import io
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import PIL
from PIL import Image as PILImage

from visioneval.core.records import Message, Part
from visioneval.core.runfiles import VariantInfo
from visioneval.core.variant_ids import variant_group
from visioneval.io.images import Image, open_to_decode
from visioneval.io.resize import capped, lanczos

RESAMPLING = "Lanczos"  # Pillow's Image.Resampling.LANCZOS: what resizing variants use
JPEG_SUBSAMPLING = "4:2:0"  # Pillow's default for JPEG, as most encoders (and providers) use
RESIZED_JPEG_QUALITY = 95  # a resized JPEG is written again at this quality
BLANK_GREY = 128  # a blank image is this uniform grey (alpha opaque), as in no-image probes


class VariantError(ValueError):
    """A `--variant` the flag's text does not name (one line, naming the choices)."""


class Variant(ABC):
    """One changed form of every sample. `name` is what the user wrote (`jpeg:50`), and the
    family's id suffix; `axis` places it on a transport curve: (what varies, its value)."""

    kind: ClassVar[str]
    help: ClassVar[str]
    argument: ClassVar[str] = ""  # the placeholder of its argument ("Q": `jpeg:Q`), if any
    removes_image: ClassVar[bool] = False
    """Whether the model is left with nothing of the image (blind, blank): the "answerable
    without the image" control."""
    read_by_benchmark: ClassVar[bool] = False
    """Whether the benchmark's own metrics read this family too (a benchmark's own variant
    that its tables show, such as SalBench's lmms-eval prompt); else the benchmark sees the
    stored samples alone."""

    @classmethod
    def usage(cls) -> str:
        """How `--variant` names it: `blind`, `jpeg:Q`."""
        return f"{cls.kind}:{cls.argument}" if cls.argument else cls.kind

    @property
    def name(self) -> str:
        """Its name in ids, groups and run.json: the kind, for a variant without argument."""
        return self.kind

    @property
    def axis(self) -> tuple[str, float] | None:
        return None

    def group(self, group: str) -> str:
        """A variant sample's group (progress, cost, the viewer)."""
        return variant_group(group, self.name)

    def metadata(self) -> dict[str, Any]:
        """What a variant sample's metadata says besides the variant (a benchmark's own
        variant may name its family the benchmark's way)."""
        return {}

    @abstractmethod
    def transform(self) -> str:
        """The exact change, in words (run.json)."""

    def info(self) -> VariantInfo:
        found = VariantInfo(name=self.name, kind=self.kind, transform=self.transform(),
                            pillow=PIL.__version__)
        if self.read_by_benchmark:
            found.read_by_benchmark = True
        return found

    def messages(self, messages: Sequence[Message], images: ImageMemo) -> tuple[Message, ...]:
        """The sample's messages in this form (images through `image`, remembered by their
        content in `images`)."""
        return tuple(Message(m.role, tuple(self._parts(m.parts, images))) for m in messages)

    def _parts(self, parts: Sequence[Part], images: ImageMemo) -> list[Part]:
        out: list[Part] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            else:
                made = images.get(self, part)
                if made is not None:
                    out.append(made)
        return out

    def image(self, image: Image) -> Image | None:
        """The image in this form; None leaves the part out. Default: unchanged."""
        return image


class Blind(Variant):
    kind = "blind"
    help = "every image removed, the text unchanged"
    removes_image = True

    def transform(self) -> str:
        return "every image part removed; the text parts unchanged and in order"

    def image(self, image: Image) -> Image | None:
        return None


class Blank(Variant):
    kind = "blank"
    help = "every image replaced by a uniform grey one of the same size and format"
    removes_image = True

    def transform(self) -> str:
        return (f"every image replaced by a uniform grey image (value {BLANK_GREY}) of the "
                "same width, height and format")

    def image(self, image: Image) -> Image | None:
        mode = "L" if image.mime == "image/jpeg" else "RGB"
        pil = PILImage.new(mode, (image.width, image.height), BLANK_GREY)
        return _encoded(pil, image.mime)


@dataclass(frozen=True)
class Jpeg(Variant):
    kind = "jpeg"
    help = "re-encoded as JPEG at quality Q (1-95)"
    argument = "Q"
    quality: int

    @property
    def name(self) -> str:
        return f"jpeg:{self.quality}"

    @property
    def axis(self) -> tuple[str, float]:
        return ("JPEG quality", float(self.quality))

    def transform(self) -> str:
        return (f"decoded and re-encoded as JPEG at quality {self.quality} (Pillow, "
                f"{JPEG_SUBSAMPLING} chroma subsampling; transparency composited on white)")

    def image(self, image: Image) -> Image | None:
        with open_to_decode(image.data) as pil:
            rgb = _rgb(pil)
        return _encoded(rgb, "image/jpeg", quality=self.quality)


@dataclass(frozen=True)
class Scale(Variant):
    kind = "scale"
    help = "resized by factor F on each side (Lanczos)"
    argument = "F"
    factor: float

    @property
    def name(self) -> str:
        return f"scale:{self.factor:g}"

    @property
    def axis(self) -> tuple[str, float]:
        return ("scale factor", self.factor)

    def transform(self) -> str:
        return (f"resized to {self.factor:g} times its width and height ({RESAMPLING}, "
                f"rounded to whole pixels), written in its own format{_JPEG_AGAIN}")

    def image(self, image: Image) -> Image | None:
        size = (max(1, round(image.width * self.factor)),
                max(1, round(image.height * self.factor)))
        return _resized(image, size)


@dataclass(frozen=True)
class MaxSide(Variant):
    kind = "max-side"
    help = "an image whose long side is over N px resized to N (Lanczos)"
    argument = "N"
    side: int

    @property
    def name(self) -> str:
        return f"max-side:{self.side}"

    @property
    def axis(self) -> tuple[str, float]:
        return ("long side (px)", float(self.side))

    def transform(self) -> str:
        return (f"an image whose long side is over {self.side} px resized so that it is "
                f"{self.side} px ({RESAMPLING}, aspect kept, written in its own "
                f"format{_JPEG_AGAIN}); smaller images sent as stored")

    def image(self, image: Image) -> Image | None:
        size = capped(image.width, image.height, self.side)
        return image if size == (image.width, image.height) else _resized(image, size)


class Grayscale(Variant):
    kind = "grayscale"
    help = "converted to grey (ITU-R 601 luma, Pillow's mode L)"

    def transform(self) -> str:
        return ("converted to one grey channel (Pillow's mode L, ITU-R 601-2 luma), written in "
                f"its own format{_JPEG_AGAIN}")

    def image(self, image: Image) -> Image | None:
        with open_to_decode(image.data) as pil:
            grey = _rgb(pil).convert("L")
        return _encoded(grey, image.mime, quality=RESIZED_JPEG_QUALITY)


_JPEG_AGAIN = f" (a JPEG at quality {RESIZED_JPEG_QUALITY}, other formats as PNG)"


def _rgb(pil: PILImage.Image) -> PILImage.Image:
    """The decoded image as RGB, any transparency composited on white."""
    if pil.mode in ("RGBA", "LA", "PA") or (pil.mode == "P" and "transparency" in pil.info):
        rgba = pil.convert("RGBA")
        white = PILImage.new("RGB", rgba.size, (255, 255, 255))
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return pil.convert("RGB") if pil.mode != "L" else pil.copy()


def _resized(image: Image, size: tuple[int, int]) -> Image:
    with open_to_decode(image.data) as pil:
        small = lanczos(pil, size)
    return _encoded(small, image.mime, quality=RESIZED_JPEG_QUALITY)


def _encoded(pil: PILImage.Image, mime: str, quality: int = RESIZED_JPEG_QUALITY) -> Image:
    """The image written as JPEG (`mime` image/jpeg, at `quality`) or else PNG."""
    buffer = io.BytesIO()
    if mime == "image/jpeg":
        rgb = pil if pil.mode in ("RGB", "L") else _rgb(pil)
        rgb.save(buffer, format="JPEG", quality=quality)
    else:
        pil.save(buffer, format="PNG")
    return Image.from_bytes(buffer.getvalue())


@dataclass
class ImageMemo:
    """Each image's form under each variant, made once per content (a few-shot example
    shared by every query is made once); the last `size` kept."""

    size: int = 64
    _made: dict[tuple[str, str], Image | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, variant: Variant, image: Image) -> Image | None:
        """Shared by the threads that make variants: the memo is locked, the making not
        (two threads may make one image twice, never wait on each other)."""
        key = (variant.name, image.sha256)
        with self._lock:
            if key in self._made:
                made = self._made.pop(key)
                self._made[key] = made  # most recent last
                return made
        made = variant.image(image)
        if made is not None and made.sha256 == image.sha256:
            made = image
        elif made is not None and image.shared:
            made.shared = True
        with self._lock:
            self._made[key] = made
            while len(self._made) > self.size:
                del self._made[next(iter(self._made))]
        return made


# -- the flag ----------------------------------------------------------------------------

BUILTIN: tuple[type[Variant], ...] = (Blind, Blank, Grayscale, Jpeg, Scale, MaxSide)
_PLAIN: dict[str, Callable[[], Variant]] = {"blind": Blind, "blank": Blank,
                                            "grayscale": Grayscale}


def usage() -> str:
    return (f"{', '.join(kind.usage() for kind in BUILTIN)} (a list: jpeg:90,50,20 or "
            "jpeg:90,jpeg:50)")


def parse(given: Sequence[str], own: dict[str, Variant] | None = None) -> list[Variant]:
    """The variants `--variant` names, in order, each once. A comma lists several;
    a bare number continues the kind before it (`max-side:1568,768,384`). `own`: the
    benchmark's own variants by name."""
    own = own or {}
    out: list[Variant] = []
    for text in given:
        kind = ""
        for piece in (p.strip() for p in text.split(",")):
            if not piece:
                continue
            name, colon, arg = piece.partition(":")
            if not colon and kind and _number(piece):
                name, arg = kind, piece
            variant = _one(name.strip().lower(), arg.strip(), piece, own)
            kind = variant.kind if variant.axis is not None else ""
            if variant.name not in {v.name for v in out}:
                out.append(variant)
    return out


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _one(name: str, arg: str, piece: str, own: dict[str, Variant]) -> Variant:
    if piece in own:
        return own[piece]
    if name in _PLAIN:
        if arg:
            raise VariantError(f"--variant {piece}: {name} takes no argument")
        return _PLAIN[name]()
    try:
        if name == "jpeg":
            quality = int(arg)
            if not 1 <= quality <= 95:
                raise VariantError(f"--variant {piece}: JPEG quality is 1 to 95 (Pillow's "
                                   "range; above 95 only grows the file)")
            return Jpeg(quality)
        if name == "scale":
            factor = float(arg)
            if not 0 < factor <= 4:
                raise VariantError(f"--variant {piece}: a scale factor is over 0 and at "
                                   "most 4")
            return Scale(factor)
        if name == "max-side":
            side = int(arg)
            if side < 16:
                raise VariantError(f"--variant {piece}: the long side is at least 16 px")
            return MaxSide(side)
    except VariantError:
        raise
    except ValueError:
        raise VariantError(f"--variant {piece}: {name} needs a number "
                           f"({'jpeg:50' if name == 'jpeg' else name + ':...'})") from None
    names = [*(k.kind for k in BUILTIN), *own]
    raise VariantError(f"--variant {piece}: not a variant; choose from "
                       f"{', '.join(dict.fromkeys(names))} ({usage()})")
