"""Scripted rubric judges with known flaws, and one without, for testing visioneval's checks
of judges (blind and order controls, sensitivity probes, agreement between judges).

They are stand-ins, not vision: their "eyes" are the `Scene` each image carries in its PNG
text chunk (`loopback.scenes`), and they read the candidate answer with a small parser of
claims: counts ("two people", "5 bottles", "a desk" = 1), colour words before a noun ("a red
cup"; "wooden" is a material) and object nouns from a vocabulary (the scene's names, the
80 COCO categories and a few everyday synonyms such as sofa, fridge, mug; singular and
plural). Words outside the vocabulary ("a man") are not read. The modes of `visioneval
loopback --answer`:

- `judge-sees`: lists each claim the scene contradicts (a wrong count, an object not in the
  image, a wrong colour) as a hallucination and each object never mentioned as missing; the
  rubric's first dimension (accuracy) is 10 - 3 per hallucination, a dimension named
  *complete* the share of objects mentioned, any other 8. With two images (the comparison
  rubric: Image 1 before, Image 2 after) it checks the changes the answer claims instead.
  With no image attached it cannot check anything and says so (every dimension 3); the
  same for an image without a scene (a resizing server's re-encoded PNG has none).
- `judge-first`: as `judge-sees`, but the first attached image is Image 1 whatever the
  "Image k:" labels say (a position bias: swapping the images reverses every change).
- `judge-no-counts`: as `judge-sees`, but blind to counts.
- `judge-noise`: every dimension a uniform integer 0-10, from a seeded stream per server.
- `judge-varies`: a judge whose verdicts vary from call to call by a known amount: each
  case its own level (3-7 on every dimension, from a checksum of the prompt) and every
  call an offset of -2 to +2 on every dimension, drawn by the request's sampling seed; the
  weighted score (0-1) varies about the case's level with variance 0.02 whatever the
  rubric's weights. It looks at nothing.
- (`judge`, in `loopback.server`, scores a checksum of the prompt: it ignores the image.)

Each reads only the text chunk of each PNG, never its pixels, so answering is cheap.
"""

from __future__ import annotations

import json
import random
import re
import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

import pybase64

from visioneval.loopback.scenes import Scene, read_scene
from visioneval.metrics.coco import COCO_OBJECTS


class Prompt(Protocol):
    """What the loopback server saw (`server.Prompt`, which imports this module): the
    prompt text and the base64 images in order."""

    @property
    def text(self) -> str: ...

    @property
    def images(self) -> list[str]: ...

    @property
    def seed(self) -> int | None: ...

REFUSAL = "I can only act as a rubric judge."  # as the checksum judge (`server.answer_judge`)
BLIND_SCORE = 3  # every dimension, when there is nothing to look at
OTHER_SCORE = 8  # dimensions that are neither accuracy nor completeness
PENALTY = 3  # accuracy points lost per hallucination

IRREGULAR = {"person": "people", "mouse": "mice", "knife": "knives", "sheep": "sheep",
             "skis": "skis", "scissors": "scissors", "shelf": "shelves", "leaf": "leaves",
             "man": "men", "woman": "women", "child": "children", "foot": "feet"}
COLOURS = frozenset((
    "red", "green", "blue", "yellow", "orange", "purple", "pink", "brown", "black", "white",
    "grey", "gray", "beige", "teal", "navy", "silver", "gold", "golden", "cyan", "magenta",
    "violet", "tan", "maroon", "turquoise", "cream"))
SAME_COLOUR = {"gray": "grey", "golden": "gold"}
NUMBERS = {"no": 0, "zero": 0, "a": 1, "an": 1, "another": 1, "one": 1, "both": 2, "two": 2,
           "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
           "fifteen": 15, "twenty": 20}
INDEFINITE = frozenset(("a", "an", "another"))  # "a cup ... a cup" is two cups
DETERMINERS = frozenset(("the", "this", "that", "these", "those", "its", "their", "his",
                         "her", "each", "every", "all", "any", "other"))
VAGUE = frozenset(("few", "several", "some", "many", "multiple", "various", "numerous",
                   "lots", "couple", "plenty", "more", "fewer", "less"))
PREPOSITIONS = frozenset(("on", "in", "at", "of", "to", "by", "near", "next", "beside",
                          "behind", "under", "above", "below", "from", "into", "onto",
                          "over", "between", "against", "inside", "beneath", "atop"))
STOPS = PREPOSITIONS | frozenset((
    "and", "or", "but", "with", "without", "is", "are", "was", "were", "be", "been", "has",
    "have", "had", "there", "here", "it", "they", "i", "we", "you", "which", "who", "while",
    "where", "as", "than", "image", "images", "picture", "photo", "now", "still", "also"))
PRONOUNS = frozenset(("i", "we", "you", "they", "it", "he", "she", "who"))
# Words saying which way an object changed from Image 1 to Image 2.
ADDED = frozenset(("added", "add", "adds", "appears", "appear", "appeared", "new", "more",
                   "extra", "additional", "arrived", "arrives", "joined", "joins", "placed",
                   "put"))
REMOVED = frozenset(("removed", "remove", "removes", "gone", "disappears", "disappear",
                     "disappeared", "vanished", "fewer", "less", "missing", "taken", "lost",
                     "longer"))  # "no longer"
RECOLOURED = frozenset(("changed", "changes", "turned", "turns", "became", "becomes",
                        "recoloured", "recolored", "repainted", "painted", "switched",
                        "instead", "now"))
Change = Literal["added", "removed", "recoloured"]

SCORE_KEY = re.compile(r'"(\w+)": <0-10>')  # the JSON shape `evaluators.judge` asks for
DETAIL_KEY = re.compile(r'"(\w+)": \[<')
_CANDIDATE = re.compile(r"^(`{3,}) CANDIDATE\n(.*?)\n\1$", re.S | re.M)
_LABEL = re.compile(r"^Image (\d+):[ \t]*$", re.M)
_TOKEN = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*|\d+|[.,;:!?()]")
_SENTENCE_END = frozenset(".;!?")


def plural(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if last in IRREGULAR:
        word = IRREGULAR[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def phrases(names: Iterable[str]) -> dict[tuple[str, ...], str]:
    out: dict[tuple[str, ...], str] = {}
    for name in names:
        for form in (name, plural(name)):
            out.setdefault(tuple(form.split()), name)
    return out


SYNONYMS = {"persons": "person", "television": "tv", "sofa": "couch", "fridge": "refrigerator",
            "bike": "bicycle", "motorbike": "motorcycle", "mug": "cup", "doughnut": "donut",
            "plane": "airplane"}
COCO_PHRASES = phrases(COCO_OBJECTS) | {
    tuple(form.split()): name for word, name in SYNONYMS.items()
    for form in (word, plural(word))}


@dataclass(frozen=True)
class Token:
    word: str  # lower case
    start: int  # character offsets in the answer
    end: int


@dataclass(frozen=True)
class Claim:
    """One mention of an object in the answer: "three people", "a red cup", "the desk"."""

    name: str  # the vocabulary's singular
    count: int | None  # None: no number given ("the desk", "several cups")
    indefinite: bool  # counted by "a"/"an"/"another"
    colour: str | None
    words: str  # as written, lower case
    first: int  # token index where the phrase starts
    noun: int  # token index of the noun's first word
    last: int  # token index of the noun's last word


def tokens(text: str) -> list[Token]:
    return [Token(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def claims(text: str, vocabulary: dict[tuple[str, ...], str]) -> list[Claim]:
    """Every object noun of `vocabulary` in `text`, with the count and colour before it."""
    toks = tokens(text)
    words = [t.word for t in toks]
    longest = max((len(k) for k in vocabulary), default=1)
    found: list[Claim] = []
    i = floor = 0
    while i < len(toks):
        match = _noun_at(words, i, vocabulary, longest)
        if match is None:
            i += 1
            continue
        length, name = match
        found.append(_claim(text, toks, floor, i, i + length, name))
        i = floor = i + length
    return found


def _noun_at(words: list[str], i: int, vocabulary: dict[tuple[str, ...], str],
             longest: int) -> tuple[int, str] | None:
    for length in range(min(longest, len(words) - i), 0, -1):
        name = vocabulary.get(tuple(words[i:i + length]))
        if name is None:
            continue
        if length == 1 and words[i] in COLOURS and _colour_here(words, i, vocabulary,
                                                                longest):
            return None  # "an orange cup", "green and orange spines": not the fruit
        if words[i] == "can" and i > 0 and words[i - 1] in PRONOUNS:
            return None  # "I can see": the verb, not the tin
        return length, name
    return None


def _colour_here(words: list[str], i: int, vocabulary: dict[tuple[str, ...], str],
                 longest: int) -> bool:
    """A word both a colour and a noun ("orange") is the colour before a noun or in a list
    of colours."""
    if i + 1 < len(words) and _noun_at(words, i + 1, vocabulary, longest) is not None:
        return True
    before = words[i - 1] if i > 0 else ""
    if before in ("and", "or", ",") and i > 1:
        before = words[i - 2]
    return before in COLOURS


def _claim(text: str, toks: list[Token], floor: int, noun: int, end: int, name: str) -> Claim:
    """The noun phrase ending at the noun: back over at most three modifiers to a number or
    a determiner, stopping at punctuation, function words and the previous noun (`floor`)."""
    count: int | None = None
    indefinite = False
    colour: str | None = None
    first = noun
    bounded = False  # by a number or a determiner: the words between are its modifiers
    for k in range(noun - 1, floor - 1, -1):
        word = toks[k].word
        label = k > 0 and toks[k - 1].word in ("image", "images", "picture")  # "Image 2"
        if (word in NUMBERS or word.isdigit()) and not label:
            count = int(word) if word.isdigit() else NUMBERS[word]
            indefinite = word in INDEFINITE
            first, bounded = k, True
            break
        if word in DETERMINERS or word in VAGUE:
            first, bounded = k, True
            break
        if word in STOPS or not word[0].isalpha() or noun - k > 3:
            break  # (three modifiers at most: noun - 1 - k of them are read)
        if word in COLOURS and colour is None:
            colour = SAME_COLOUR.get(word, word)
        first = k
    if not bounded:  # "shows red cups": of unbounded modifiers only colours are kept
        first = next((k for k in range(first, noun) if toks[k].word in COLOURS), noun)
    phrase = text[toks[first].start:toks[end - 1].end].lower()
    return Claim(name, count, indefinite, colour, " ".join(phrase.split()), first, noun,
                 end - 1)


def _colour_words(colour: str) -> set[str]:
    return {SAME_COLOUR.get(w, w) for w in colour.lower().split()}


def _same_object(a: str, b: str) -> bool:
    """"potted plant" is a "plant", "table" a "dining table": the head noun decides."""
    return a == b or a.endswith(" " + b) or b.endswith(" " + a)


def _scene_name(names: list[str], name: str) -> str | None:
    if name in names:
        return name
    return next((n for n in names if _same_object(n, name)), None)


def _amount(scene: Scene, name: str) -> str:
    """"2 blue people", "no plant": what one image shows of an object."""
    n = scene.count(name)
    if n == 0:
        return f"no {name}"
    colours = " and ".join(scene.colours(name))
    return f"{n} {colours + ' ' if colours else ''}{name if n == 1 else plural(name)}"


@dataclass(frozen=True)
class Findings:
    """What a seeing judge found: the details it lists and the share for completeness."""

    hallucinations: list[str]
    missing: list[str]
    covered: int  # objects mentioned (a description) or changes described right
    total: int  # objects in the image, or changes between the images
    checked: int  # claims read from the answer


def check_description(scene: Scene, answer: str, counts: bool = True) -> Findings:
    """Each claim of `answer` against the scene: counts, presence, colours."""
    names = scene.names()
    found = claims(answer, COCO_PHRASES | phrases(names))
    wrong: list[tuple[int, str]] = []
    mentioned: set[str] = set()
    pools: dict[tuple[str, str | None], list[Claim]] = {}
    for claim in found:
        name = _scene_name(names, claim.name)
        if name is None:
            if claim.count != 0:  # "no giraffe" is right
                wrong.append((claim.first, f"{claim.words} (not in the image)"))
            continue
        mentioned.add(name)
        colours = scene.colours(name)
        known = set().union(*(_colour_words(c) for c in colours)) if colours else set()
        if claim.colour and known and claim.colour not in known:
            said = f"the {name} is" if scene.count(name) == 1 else f"the {plural(name)} are"
            wrong.append((claim.first, f"{claim.words} ({said} {' and '.join(colours)})"))
        if counts and claim.count is not None:
            pool_colour = claim.colour if claim.colour in known else None
            pools.setdefault((name, pool_colour), []).append(claim)
    for (name, colour), group in pools.items():
        n = sum(o.count for o in scene.objects if o.name == name and (
            colour is None or (o.colour and colour in _colour_words(o.colour))))
        numbered = [c for c in group if not c.indefinite]
        if numbered:
            wrong += [(c.first, f"{c.words} (the image shows {n})")
                      for c in numbered if c.count != n]
        elif len(group) != n:  # "a cup ... a cup": two cups
            wrong.append((group[0].first, f"{group[0].words} (the image shows {n})"))
    return Findings(_distinct(item for _, item in sorted(wrong, key=lambda w: w[0])),
                    [n for n in names if n not in mentioned], len(mentioned), len(names),
                    len(found))


def _distinct(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def changes(before: Scene, after: Scene) -> list[tuple[str, Change]]:
    """The objects whose count or colour differ from Image 1 (before) to Image 2 (after)."""
    out: list[tuple[str, Change]] = []
    for name in _distinct([*before.names(), *after.names()]):
        n1, n2 = before.count(name), after.count(name)
        if n1 != n2:
            out.append((name, "added" if n2 > n1 else "removed"))
        c1, c2 = before.colours(name), after.colours(name)
        if n1 and n2 and c1 and c2 and set(c1) != set(c2):
            out.append((name, "recoloured"))
    return out


def _marker(word: str) -> Change | None:
    if word in ADDED:
        return "added"
    if word in REMOVED:
        return "removed"
    return "recoloured" if word in RECOLOURED else None


def check_comparison(before: Scene, after: Scene, answer: str) -> Findings:
    """Each change the answer claims (an object named with a word of direction: added,
    gone, now blue ...) against the changes from Image 1 to Image 2."""
    names = _distinct([*before.names(), *after.names()])
    truth = changes(before, after)
    toks = tokens(answer)
    found = claims(answer, COCO_PHRASES | phrases(names))
    wrong: list[str] = []
    right: set[tuple[str, Change]] = set()
    addressed: set[str] = set()
    for claim in found:
        if claim.first > 0 and toks[claim.first - 1].word in PREPOSITIONS:
            continue  # "next to the desk": a place, not what changed
        said = _claimed_change(toks, claim)
        if said is None:
            continue
        kind, at, colour, end = said
        span = answer[toks[min(at, claim.first)].start:toks[max(at, claim.last, end)].end]
        words = " ".join(span.lower().split())
        name = _scene_name(names, claim.name)
        if name is None:
            wrong.append(f"{words} (in neither image)")
            continue
        addressed.add(name)
        if (name, kind) in truth and (kind != "recoloured" or colour is None or any(
                colour in _colour_words(c) for c in after.colours(name))) and \
                _colours_seen(before, after, name, kind, claim.colour,
                              _sentence_colours(toks, claim)):
            right.add((name, kind))
        else:
            wrong.append(f"{words} (Image 1 shows {_amount(before, name)}, Image 2 shows "
                         f"{_amount(after, name)})")
    missing = [f"{name} {kind} (Image 1 shows {_amount(before, name)}, Image 2 shows "
               f"{_amount(after, name)})" for name, kind in truth
               if (name, kind) not in right and name not in addressed]
    return Findings(_distinct(wrong), missing, len(right), len(truth), len(found))


def _sentence(toks: list[Token], claim: Claim) -> range:
    """The token positions of the claim's sentence."""
    lo = claim.first
    while lo > 0 and toks[lo - 1].word not in _SENTENCE_END:
        lo -= 1
    hi = claim.last
    while hi + 1 < len(toks) and toks[hi + 1].word not in _SENTENCE_END:
        hi += 1
    return range(lo, hi + 1)


def _sentence_colours(toks: list[Token], claim: Claim) -> list[str]:
    """The colour words of the claim's sentence."""
    return [SAME_COLOUR.get(toks[k].word, toks[k].word) for k in _sentence(toks, claim)
            if toks[k].word in COLOURS]


def _colours_seen(before: Scene, after: Scene, name: str, kind: Change,
                  own: str | None, sentence: list[str]) -> bool:
    """Whether the colours the answer gives the changed object are ones it has: an added
    object's own colour in Image 2, a removed one's in Image 1, and for a recolouring every
    colour of the sentence in one image or the other ("from red to blue")."""
    def words(scene: Scene) -> set[str]:
        return set().union(*(_colour_words(c) for c in scene.colours(name)))

    if kind == "recoloured":
        known = words(before) | words(after)
        return not known or all(c in known for c in sentence)
    known = words(after if kind == "added" else before)
    return own is None or not known or own in known


def _claimed_change(toks: list[Token], claim: Claim
                    ) -> tuple[Change, int, str | None, int] | None:
    """The change the claim's sentence gives its object: the nearest word of direction (and
    its index), for a colour change the colour it ends with (the last colour word of the
    sentence), and where the words of the claim end."""
    sentence = _sentence(toks, claim)
    coloured = [k for k in sentence if toks[k].word in COLOURS]
    colours = [SAME_COLOUR.get(toks[k].word, toks[k].word) for k in coloured]
    best: tuple[int, Change, int] | None = None
    for k in sentence:
        kind = _marker(toks[k].word)
        if kind is None or (kind == "recoloured" and not colours):
            continue
        distance = claim.first - k if k < claim.first else max(0, k - claim.last)
        if best is None or distance < best[0]:
            best = (distance, kind, k)
    if best is None:
        return None
    _, kind, at = best
    if kind == "recoloured":
        return kind, at, colours[-1], coloured[-1]
    return kind, at, None, at


@dataclass(frozen=True)
class JudgeAsk:
    """A rubric judge request as the server saw it: the dimensions and details the JSON
    shape asks for, the candidate answer, and each image's scene as Image 1, 2 ..."""

    score_keys: list[str]
    detail_keys: list[str]
    answer: str
    scenes: list[Scene | None]


def read_ask(prompt: Prompt, by_label: bool = True) -> JudgeAsk | None:
    """None when the prompt is not a rubric judge's. The images are put in the order of
    their "Image k:" labels (`by_label`) or taken in the order attached."""
    keys = _distinct(SCORE_KEY.findall(prompt.text))
    if not keys:
        return None
    fenced = _CANDIDATE.search(prompt.text)
    answer = fenced.group(2) if fenced else ""
    labels = [int(n) for n in _LABEL.findall(prompt.text[fenced.end() if fenced else 0:])]
    scenes = [read_scene(pybase64.b64decode(image)) for image in prompt.images]
    if by_label and len(labels) == len(scenes) and sorted(labels) == list(
            range(1, len(scenes) + 1)):
        scenes = [scene for _, scene in sorted(zip(labels, scenes, strict=True),
                                               key=lambda pair: pair[0])]
    return JudgeAsk(keys, _distinct(DETAIL_KEY.findall(prompt.text)), answer, scenes)


def _reply(ask: JudgeAsk, scores: dict[str, int], reasoning: str,
           found: Findings | None = None) -> str:
    details: dict[str, list[str]] = {k: [] for k in ask.detail_keys}
    if found is not None:
        for key, items in (("hallucinations", found.hallucinations),
                           ("missing_elements", found.missing)):
            if key in details:
                details[key] = items
    return json.dumps({"reasoning": reasoning, "scores": scores, "details": details})


def verdict(prompt: Prompt, by_label: bool = True, counts: bool = True) -> str:
    """A seeing judge's JSON verdict (see the module's account of the scores)."""
    ask = read_ask(prompt, by_label)
    if ask is None:
        return REFUSAL
    if not ask.scenes:
        return _reply(ask, dict.fromkeys(ask.score_keys, BLIND_SCORE),
                      "No image was attached to the request, so nothing the answer says "
                      "could be checked against it.")
    unseen = [str(i + 1) for i, scene in enumerate(ask.scenes) if scene is None]
    if unseen:
        return _reply(ask, dict.fromkeys(ask.score_keys, BLIND_SCORE),
                      f"Image {', '.join(unseen)} carries no scene this scripted judge can "
                      "read (a re-encoded image loses it), so nothing could be checked.")
    scenes = [s for s in ask.scenes if s is not None]
    if len(scenes) >= 2:
        found = check_comparison(scenes[0], scenes[1], ask.answer)
        what = (f"{found.total} change(s) between Image 1 and Image 2, {found.covered} "
                f"described right, {len(found.hallucinations)} claim(s) wrong or invented")
    else:
        found = check_description(scenes[0], ask.answer, counts)
        what = (f"{found.checked} mention(s) of objects checked, "
                f"{len(found.hallucinations)} contradicted by the image; {found.covered} "
                f"of {found.total} objects mentioned")
    accuracy = max(0, 10 - PENALTY * len(found.hallucinations))
    complete = round(10 * found.covered / found.total) if found.total else 10
    scores = {key: accuracy if i == 0 else complete if "complete" in key else OTHER_SCORE
              for i, key in enumerate(ask.score_keys)}
    return _reply(ask, scores, f"Scripted judge reading the scene written into each image, "
                  f"not vision: {what}.", found)


def judge_sees(prompt: Prompt) -> str:
    """The judge that sees: every contradiction and omission found."""
    return verdict(prompt)


def judge_first(prompt: Prompt) -> str:
    """A position bias: the first image attached is Image 1, whatever its label says."""
    return verdict(prompt, by_label=False)


def judge_no_counts(prompt: Prompt) -> str:
    """Sees objects and colours but never notices a wrong count."""
    return verdict(prompt, counts=False)


def judge_noise(seed: int = 0) -> Callable[[Prompt], str]:
    """A judge that guesses: each dimension a uniform integer 0-10, drawn from a stream
    seeded per server and advanced per request (under a lock: requests may come from
    several threads); no details."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def noise(prompt: Prompt) -> str:
        keys = _distinct(SCORE_KEY.findall(prompt.text))
        if not keys:
            return REFUSAL
        with lock:
            scores = {key: rng.randint(0, 10) for key in keys}
        return json.dumps({"reasoning": "Scripted judge that guesses: every score is a "
                           "random draw, nothing was looked at.", "scores": scores,
                           "details": {k: [] for k in _distinct(DETAIL_KEY.findall(
                               prompt.text))}})

    noise.__name__ = f"judge_noise_seed{seed}"
    return noise


VARIES_LEVELS = (3, 7)  # a case's own level on every dimension, from the prompt
VARIES_OFFSET = 2  # each call moves every dimension by -2 to +2, uniformly
VARIES_WITHIN = ((2 * VARIES_OFFSET + 1) ** 2 - 1) / 12 / 100
"""The variance of one verdict's weighted score (0-1) about its case's level: a discrete
uniform offset of -2 to +2 points has variance (5^2 - 1) / 12 = 2 points^2, 0.02 on 0-1."""


def judge_varies(prompt: Prompt) -> str:
    """A judge whose verdicts vary by a known amount: the case's level from a checksum of
    the prompt, an offset from that checksum and the request's seed, so the N samples of a
    case (seeds 0 .. N-1) differ and a run asked again gives the same verdicts."""
    keys = _distinct(SCORE_KEY.findall(prompt.text))
    if not keys:
        return REFUSAL
    checksum = zlib.crc32(prompt.text.encode())
    low, high = VARIES_LEVELS
    level = low + checksum % (high - low + 1)
    offset = random.Random(f"{checksum}:{prompt.seed}").randint(-VARIES_OFFSET, VARIES_OFFSET)
    return json.dumps({"reasoning": f"Scripted judge whose scores vary from call to call: "
                       f"level {level} for this case, {offset:+d} on this call.",
                       "scores": dict.fromkeys(keys, level + offset),
                       "details": {k: [] for k in _distinct(DETAIL_KEY.findall(prompt.text))}})
