"""Draws the example scenes for rubric judges: flat shapes in a 320x200 PNG, each carrying
the `Scene` a person sees in it (visioneval.loopback.scenes), which the loopback's scripted
judges read in place of vision. Also writes the scenes of ../office.png and ../shelf.png
into those files, keeping their pixels. Run once from anywhere:

    uv run python examples/evaluators/scenes/make_scenes.py
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw

from visioneval.loopback.scenes import Scene, SceneObject, write_scene

HERE = Path(__file__).parent
SIZE = (320, 200)
WALL = (235, 230, 220)
SKIN = (200, 160, 130)
WOOD = (120, 80, 40)
RGB = {"red": (190, 50, 50), "green": (30, 120, 40), "blue": (40, 70, 150),
       "yellow": (230, 190, 40), "white": (250, 250, 250), "black": (30, 30, 30),
       "grey": (150, 150, 155), "brown": WOOD, "orange": (230, 130, 30)}

Draw = ImageDraw.ImageDraw


def person(d: Draw, x: int, y: int, shirt: str) -> None:
    """A seated person: head above a body, `y` the bottom of the body."""
    d.ellipse((x - 15, y - 70, x + 15, y - 40), fill=SKIN)
    d.rectangle((x - 20, y - 40, x + 20, y), fill=RGB[shirt])


def plant(d: Draw, x: int, y: int) -> None:
    """A potted plant standing on `y`."""
    d.rectangle((x - 10, y - 20, x + 10, y), fill=(150, 90, 60))
    d.ellipse((x - 20, y - 60, x + 20, y - 15), fill=RGB["green"])


def bottle(d: Draw, x: int, y: int, colour: str) -> None:
    d.rectangle((x - 9, y - 45, x + 9, y), fill=RGB[colour])
    d.rectangle((x - 4, y - 60, x + 4, y - 45), fill=RGB[colour])


def can(d: Draw, x: int, y: int, colour: str) -> None:
    d.rectangle((x - 10, y - 28, x + 10, y), fill=RGB[colour])


def cup(d: Draw, x: int, y: int, colour: str) -> None:
    d.rectangle((x - 10, y - 22, x + 10, y), fill=RGB[colour], outline=(90, 90, 90))
    d.arc((x + 4, y - 17, x + 18, y - 5), -90, 90, fill=(90, 90, 90), width=3)


def vase(d: Draw, x: int, y: int, colour: str) -> None:
    d.ellipse((x - 18, y - 40, x + 18, y), fill=RGB[colour])
    d.rectangle((x - 7, y - 62, x + 7, y - 30), fill=RGB[colour])


def table(d: Draw, x0: int, x1: int, y: int) -> None:
    d.rectangle((x0, y, x1, y + 12), fill=WOOD)
    d.rectangle((x0 + 8, y + 12, x0 + 18, y + 60), fill=WOOD)
    d.rectangle((x1 - 18, y + 12, x1 - 8, y + 60), fill=WOOD)


def car(d: Draw, x: int, y: int, colour: str) -> None:
    """A car facing right, `x` its left end, `y` the road."""
    d.rectangle((x, y - 30, x + 80, y - 10), fill=RGB[colour])
    d.rectangle((x + 15, y - 48, x + 60, y - 30), fill=RGB[colour])
    d.rectangle((x + 22, y - 44, x + 53, y - 32), fill=(190, 215, 235))
    for wx in (x + 18, x + 62):
        d.ellipse((wx - 10, y - 20, wx + 10, y), fill=RGB["black"])


def bicycle(d: Draw, x: int, y: int) -> None:
    black = RGB["black"]
    for wx in (x, x + 44):
        d.ellipse((wx - 15, y - 30, wx + 15, y), outline=black, width=3)
    d.line((x, y - 15, x + 20, y - 35, x + 44, y - 15), fill=black, width=3)
    d.line((x + 20, y - 35, x + 22, y - 15, x, y - 15), fill=black, width=3)
    d.line((x + 40, y - 40, x + 44, y - 15), fill=black, width=3)


def tree(d: Draw, x: int, y: int) -> None:
    d.rectangle((x - 6, y - 40, x + 6, y), fill=WOOD)
    d.ellipse((x - 30, y - 100, x + 30, y - 35), fill=RGB["green"])


def scene(*objects: tuple[str, int, str | None, str]) -> Scene:
    return Scene(objects=tuple(SceneObject(name=n, count=c, colour=col, where=w)
                               for n, c, col, w in objects))


def team(d: Draw) -> Scene:
    """Three people at a desk, a laptop on it, a plant on the left."""
    for x in (120, 180, 240):
        person(d, x, 125, "red")
    d.rectangle((90, 120, 280, 135), fill=WOOD)
    d.polygon((150, 120, 205, 120, 195, 104, 160, 104), fill=RGB["grey"])
    plant(d, 45, 160)
    return scene(("person", 3, "red", "behind the desk"), ("desk", 1, "brown", "centre"),
                 ("laptop", 1, "grey", "on the desk"), ("plant", 1, "green", "left"))


def pantry(d: Draw) -> Scene:
    """A shelf of four blue bottles and two grey cans."""
    d.rectangle((20, 140, 300, 152), fill=WOOD)
    for x in (50, 85, 120, 155):
        bottle(d, x, 140, "blue")
    for x in (215, 255):
        can(d, x, 140, "grey")
    return scene(("shelf", 1, "brown", "across the image"), ("bottle", 4, "blue", "left"),
                 ("can", 2, "grey", "right"))


def tea(d: Draw) -> Scene:
    """A table with three white cups and a red vase."""
    table(d, 40, 280, 130)
    for x in (80, 120, 160):
        cup(d, x, 130, "white")
    vase(d, 230, 130, "red")
    return scene(("table", 1, "brown", "centre"), ("cup", 3, "white", "on the table, left"),
                 ("vase", 1, "red", "on the table, right"))


def street(d: Draw) -> Scene:
    """A red car and a blue car on a road, a bicycle and a tree behind."""
    d.rectangle((0, 0, 320, 120), fill=(200, 225, 240))
    d.rectangle((0, 120, 320, 200), fill=(110, 110, 115))
    tree(d, 270, 125)
    bicycle(d, 200, 140)
    car(d, 20, 185, "red")
    car(d, 140, 185, "blue")
    return scene(("car", 1, "red", "left"), ("car", 1, "blue", "centre"),
                 ("bicycle", 1, "black", "behind the cars"), ("tree", 1, "green", "right"))


def fruit(d: Draw) -> Scene:
    """A white bowl with three apples, two bananas beside it."""
    for x in (125, 160, 195):
        d.ellipse((x - 17, 95, x + 17, 129), fill=RGB["red"])
    d.chord((90, 70, 230, 170), 0, 180, fill=RGB["white"], outline=(120, 120, 120))
    for x in (255, 295):
        d.arc((x - 20, 110, x + 20, 170), 10, 170, fill=RGB["yellow"], width=9)
    return scene(("bowl", 1, "white", "centre"), ("apple", 3, "red", "in the bowl"),
                 ("banana", 2, "yellow", "right of the bowl"))


def lounge(d: Draw) -> Scene:
    """A green couch, a black TV on the right and a clock on the wall."""
    d.rectangle((40, 85, 180, 125), fill=(20, 95, 30))
    d.rectangle((40, 125, 180, 160), fill=RGB["green"])
    for x in (25, 180):
        d.rectangle((x, 105, x + 15, 160), fill=(20, 95, 30))
    d.rectangle((30, 160, 38, 170), fill=WOOD)
    d.rectangle((182, 160, 190, 170), fill=WOOD)
    d.rectangle((220, 80, 300, 130), fill=RGB["black"])
    d.rectangle((255, 130, 265, 160), fill=RGB["black"])
    d.ellipse((85, 20, 125, 60), fill=RGB["white"], outline=RGB["black"], width=2)
    d.line((105, 40, 105, 27, 105, 40, 115, 40), fill=RGB["black"], width=2)
    return scene(("couch", 1, "green", "left"), ("tv", 1, "black", "right"),
                 ("clock", 1, "white", "on the wall above the couch"))


def park(d: Draw) -> Scene:
    """Two trees, a bench between them and a black dog."""
    d.rectangle((0, 0, 320, 130), fill=(200, 225, 240))
    d.rectangle((0, 130, 320, 200), fill=(120, 180, 90))
    tree(d, 50, 150)
    tree(d, 270, 150)
    d.rectangle((110, 120, 210, 128), fill=WOOD)
    d.rectangle((110, 135, 210, 142), fill=WOOD)
    for x in (115, 200):
        d.rectangle((x, 142, x + 6, 160), fill=WOOD)
    d.ellipse((150, 160, 200, 182), fill=RGB["black"])
    d.ellipse((192, 150, 212, 168), fill=RGB["black"])
    for x in (156, 190):
        d.rectangle((x, 176, x + 4, 192), fill=RGB["black"])
    return scene(("tree", 2, "green", "left and right"), ("bench", 1, "brown", "centre"),
                 ("dog", 1, "black", "in front of the bench"))


def chair(d: Draw, x: int, y: int, colour: str, back_left: bool) -> None:
    """A chair seen from the side, `x` its left edge, `y` the floor."""
    back, leg = (x, x + 24) if back_left else (x + 24, x)
    d.rectangle((x, y - 40, x + 30, y - 32), fill=RGB[colour])
    d.rectangle((back, y - 80, back + 6, y), fill=RGB[colour])
    d.rectangle((leg, y - 32, leg + 6, y), fill=RGB[colour])


def kitchen(d: Draw) -> Scene:
    """A white refrigerator, a table and two yellow chairs."""
    d.rectangle((20, 30, 90, 180), fill=RGB["white"], outline=(120, 120, 120))
    d.line((20, 85, 90, 85), fill=(120, 120, 120))
    d.rectangle((80, 50, 84, 75), fill=(120, 120, 120))
    table(d, 150, 260, 120)
    chair(d, 115, 180, "yellow", back_left=True)
    chair(d, 265, 180, "yellow", back_left=False)
    return scene(("refrigerator", 1, "white", "left"), ("table", 1, "brown", "centre"),
                 ("chair", 2, "yellow", "either side of the table"))


def books(d: Draw) -> Scene:
    """A shelf of six books and a yellow cup."""
    d.rectangle((20, 150, 300, 162), fill=WOOD)
    spines = ("red", "blue", "green", "orange", "blue", "red")
    for i, colour in enumerate(spines):
        x = 40 + 24 * i
        d.rectangle((x, 150 - 70 - 6 * (i % 3), x + 20, 150), fill=RGB[colour])
    cup(d, 250, 150, "yellow")
    return scene(("shelf", 1, "brown", "across the image"), ("book", 6, None, "left"),
                 ("cup", 1, "yellow", "right"))


def beach(d: Draw) -> Scene:
    """Two red umbrellas and a yellow surfboard on the sand."""
    d.rectangle((0, 0, 320, 90), fill=(150, 200, 235))
    d.rectangle((0, 90, 320, 200), fill=(235, 215, 160))
    for x in (70, 160):
        d.line((x, 90, x, 170), fill=RGB["black"], width=3)
        d.pieslice((x - 45, 60, x + 45, 120), 180, 360, fill=RGB["red"])
    d.rounded_rectangle((240, 60, 266, 180), radius=13, fill=RGB["yellow"])
    return scene(("umbrella", 2, "red", "left and centre"),
                 ("surfboard", 1, "yellow", "standing on the right"))


def room(with_plant: bool) -> Callable[[Draw], Scene]:
    """A desk, a chair and a cup; afterwards a plant on the floor at the right."""

    def draw(d: Draw) -> Scene:
        table(d, 60, 220, 110)
        chair(d, 125, 180, "black", back_left=False)
        cup(d, 90, 110, "white")
        objects = [("desk", 1, "brown", "centre"), ("chair", 1, "black", "at the desk"),
                   ("cup", 1, "white", "on the desk")]
        if with_plant:
            plant(d, 270, 180)
            objects.append(("plant", 1, "green", "on the floor, right"))
        return scene(*objects)

    return draw


def table_vase(colour: str) -> Callable[[Draw], Scene]:
    """A bowl and a vase on a table; afterwards the vase is another colour."""

    def draw(d: Draw) -> Scene:
        table(d, 50, 270, 130)
        d.chord((80, 70, 160, 130), 0, 180, fill=RGB["white"], outline=(120, 120, 120))
        vase(d, 210, 130, colour)
        return scene(("table", 1, "brown", "centre"), ("bowl", 1, "white", "left"),
                     ("vase", 1, colour, "right"))

    return draw


SCENES: dict[str, Callable[[Draw], Scene]] = {
    "team": team, "pantry": pantry, "tea": tea, "street": street, "fruit": fruit,
    "lounge": lounge, "park": park, "kitchen": kitchen, "books": books, "beach": beach,
    "room-before": room(False), "room-after": room(True),
    "vase-before": table_vase("red"), "vase-after": table_vase("blue"),
}

EXISTING = {
    "office.png": scene(("person", 2, "blue", "behind the desk"),
                        ("desk", 1, "brown", "centre"), ("plant", 1, "green", "right")),
    "shelf.png": scene(("bottle", 5, "green", "left"), ("can", 3, "red", "right")),
}


def draw(make: Callable[[Draw], Scene]) -> bytes:
    image = Image.new("RGB", SIZE, WALL)
    found = make(ImageDraw.Draw(image))
    # A palette PNG when it holds the very same pixels (flat shapes use few colours): a
    # fraction of the bytes.
    palette = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                             dither=Image.Dither.NONE)
    same = palette.convert("RGB").tobytes() == image.tobytes()
    return write_scene(palette if same else image, found)


def main() -> None:
    for name, make in SCENES.items():
        (HERE / f"{name}.png").write_bytes(draw(make))
    for name, found in EXISTING.items():
        path = HERE.parent / name
        with Image.open(path) as old:
            old.load()
            png = write_scene(old, found)
        with Image.open(io.BytesIO(png)) as new:
            if new.mode != old.mode or new.tobytes() != old.tobytes():
                raise SystemExit(f"{path}: the pixels would change")
        path.write_bytes(png)


if __name__ == "__main__":
    main()
