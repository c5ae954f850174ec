"""What a person sees in a picture, written into the picture: a PNG's `visioneval` text
chunk holding a `Scene` (each kind of object, how many, its colour, where).

The loopback's scripted judges (`loopback.judges`) read this chunk as their eyes. They are
stand-ins with known behaviour, made for testing visioneval's checks of rubric judges (the
blind control, the order control, the sensitivity probes, agreement between judges): a
judge that sees, one with a position bias, one that cannot count, one that guesses. They
are not vision: an image without a scene, or one a server re-encoded (which drops the
chunk), is an image they cannot see.
"""

from __future__ import annotations

import io

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from visioneval.io.pngtext import read_model, text_info


class SceneObject(BaseModel):
    """One kind of object in the picture: `name` a singular noun ("person", "bottle"),
    `colour` a plain colour word or None (mixed, or not worth a word), `where` free text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[a-z]+( [a-z]+)*$")
    count: int = Field(ge=1)
    colour: str | None = None
    where: str | None = None


class Scene(BaseModel):
    """The objects a careful person would name in the picture. Two entries may share a name
    when their colours differ (a red car and a blue car)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    objects: tuple[SceneObject, ...] = Field(min_length=1)

    def names(self) -> list[str]:
        """The distinct object names, in the order listed."""
        return list(dict.fromkeys(o.name for o in self.objects))

    def count(self, name: str) -> int:
        return sum(o.count for o in self.objects if o.name == name)

    def colours(self, name: str) -> list[str]:
        """The colours given for `name`, in order, without repeats."""
        return list(dict.fromkeys(o.colour for o in self.objects
                                  if o.name == name and o.colour))


def write_scene(image: Image.Image, scene: Scene) -> bytes:
    """The image as PNG bytes carrying `scene`; the pixels are stored losslessly as they
    are."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=True, pnginfo=text_info(scene.model_dump_json(
        exclude_none=True)))
    return buf.getvalue()


def read_scene(png: bytes) -> Scene | None:
    """The scene a PNG carries, or None (no chunk, another kind of chunk such as a
    resolution canary's, or bytes that are no PNG). Only the header chunks are read, never
    the pixels."""
    try:
        return read_model(png, Scene, "a scene")
    except ValueError:
        return None
