"""The word lists the edit rules read: numbers, colours and their replacements, the absent
objects to claim, and the words that carry no content. Data only, so a rule's behaviour
can be read from its module and its words from here."""

from __future__ import annotations


def _wordset(words: str) -> frozenset[str]:
    """A word list written as prose, one set."""
    return frozenset(words.split())


NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                "eighteen", "nineteen", "twenty")
COLOURS: dict[str, tuple[str, ...]] = {
    # each colour's replacements, most contrasting first; the first one the answer does not
    # already use is taken, so the new colour word points at the edit alone
    "red": ("green", "blue", "yellow"), "green": ("red", "purple", "yellow"),
    "blue": ("orange", "red", "yellow"), "orange": ("blue", "purple", "green"),
    "yellow": ("purple", "blue", "red"), "purple": ("yellow", "green", "orange"),
    "pink": ("black", "green", "blue"), "brown": ("blue", "white", "purple"),
    "black": ("white", "yellow", "red"), "white": ("black", "red", "blue"),
    "grey": ("yellow", "red", "green"), "gray": ("yellow", "red", "green"),
}
OBJECTS: dict[str, str] = {
    # COCO category names unlikely in a generic indoor or street scene, with the sentence
    # that claims each one
    "giraffe": "A giraffe stands in the background.",
    "zebra": "A zebra stands in the background.",
    "surfboard": "A surfboard lies in the foreground.",
    "toaster": "A toaster sits in the foreground.",
    "kite": "A kite flies in the top left corner.",
    "teddy bear": "A teddy bear sits in the bottom right corner.",
    "fire hydrant": "A fire hydrant stands in the foreground.",
    "umbrella": "An open umbrella stands in the background.",
    "skateboard": "A skateboard lies in the foreground.",
    "parking meter": "A parking meter stands in the background.",
    "frisbee": "A frisbee lies in the foreground.",
    "snowboard": "A snowboard leans in the bottom left corner.",
}
STOP = _wordset("""
a an the and or but nor so yet of in on at to from by with without within into onto over
under above below behind beside besides between among around near next across along through
against toward towards up down out off about after before during while as than then there
here this that these those it its itself they them their theirs he him his she her hers we
us our you your me my mine is are was were be been being am has have had having do does did
doing can could may might must shall should will would not no yes all any both each every
few many much more most other another some such only own same very too also just still even
again ever never always often what which who whom whose when where why how if because
although though whether either neither etc sure okay ok let here's there's it's i'm
image images picture pictures photo photos photograph scene view shot frame visible shown
show shows showing depict depicts depicted depicting appear appears appearing seen see seems
seem look looks looking contain contains containing feature features featuring include
includes including left right top bottom middle center centre front back background
foreground side sides corner corners upper lower far edge edges sit sits sitting seated
stand stands standing lie lies lying placed place positioned located rest rests resting
hold holds holding hang hangs hanging lean leans leaning thing things something object
objects item items area part parts kind type lot lots bit total number count answer
description small large big little tiny huge tall short long instead rather now already
difference differences change changes changed similarity similarities
""")
ADJECTIVES = _wordset("""
small large big little tiny huge tall short long wooden metal plastic old young round dark
light bright pale other more similar different identical separate distinct empty full open
closed striped colored coloured
""")
"""Words skipped between a number or colour and the noun it describes ("three small red
cups": cups)."""
LABELS = _wordset("""
image images picture photo figure fig panel frame step page option choice row column line
item number no version level question answer section table score rated rating grade
""")
"""A number after one of these is a label ("image 2"), not a count."""
UNITS = _wordset("""
percent pm am o'clock cm mm km kg px ft inch inches meter meters metre metres degrees year
years month months day days hour hours minute minutes second seconds
""")
"""A number before one of these is a measure, not a count of things in the image."""
IRREGULAR = {"person": "people", "man": "men", "woman": "women", "child": "children",
             "mouse": "mice", "foot": "feet", "tooth": "teeth", "goose": "geese"}
SINGULAR = {plural: single for single, plural in IRREGULAR.items()}
ABBREVIATIONS = (" e.g.", " i.e.", " etc.", " vs.", " mr.", " mrs.", " ms.", " dr.", " st.")
