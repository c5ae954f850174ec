"""Known edits of a candidate answer, for checking that a rubric judge notices them.

A judge that reads the image should score an answer lower when one of its counts is made
wrong, an absent object is claimed, an element it mentioned is left out or a colour is
changed, and it should name that edit in the verdict's detail lists (`hallucinations`,
`missing_elements`). The edits are rules, not a model: the same output always gets the same
edit (a choice between equal candidates is seeded by a hash of the output), so a rerun asks
the judge, and its cache, the same question. An edit prefers a part of the answer the
reference answer confirms, so a right statement is made wrong rather than a wrong one
changed. An answer that is one JSON value (a structured answer, fenced or not) is edited in
its values and stays JSON.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from visioneval.excerpts import excerpt


def _wordset(words: str) -> frozenset[str]:
    """A word list written as prose, one set."""
    return frozenset(words.split())


EditKind = Literal["count", "object", "missing", "colour"]
KINDS: tuple[EditKind, ...] = ("count", "object", "missing", "colour")
DETAIL: dict[str, str] = {"count": "hallucinations", "object": "hallucinations",
                          "colour": "hallucinations", "missing": "missing_elements"}
"""The verdict's detail list that should name each kind (the rubrics' `details` keys)."""

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
MAX_MARKERS = 12  # content words kept as markers of a removed part

_WORD = r"[^\W\d_]+(?:['’][^\W\d_]+)?"
_COUNT = re.compile(
    r"(?<![\w.,:/$€£#-])(?:(?P<digits>[0-9]{1,3})|(?P<word>"
    + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
    + r"))(?![\w%°-]|[.,:/][0-9])", re.IGNORECASE)
_COLOUR = re.compile(r"(?<![\w-])(?:" + "|".join(COLOURS) + r")(?![\w-])", re.IGNORECASE)
_NEXT_WORD = re.compile(r"[ \t]+(" + _WORD + ")")
_LAST_WORD = re.compile(r"(" + _WORD + r")[ \t]*\(?$")
_ARTICLE = re.compile(r"(?<!\w)(an?)([ \t]+)$", re.IGNORECASE)
_CONTENT = re.compile(_WORD)
_SENTENCES = re.compile(r"(\n\s*|(?:(?<=[.!?])|(?<=[.!?][\"'”’)\]]))[ \t]+(?:\n\s*)?)")
_LIST_NUMBER = re.compile(r"[.)][ \t]+\S")
_LIST_ITEM = re.compile(r"\s*[0-9]{1,3}[.)]")
_BULLET = re.compile(r"\s*(?:[-*•]|(?P<n>[0-9]{1,3})[.)])\s+")
_FENCE_OPENING = re.compile(r"```[A-Za-z]*[ \t]*")
_CLAUSES = ("; ", ", and ", " and ", ", ")
_TERMINAL = ".!?\"'”’)]"


@dataclass(frozen=True)
class Edit:
    """One edit of a candidate output: the edited output, the edit in words, the words a
    judge that names it would use, and the detail list that should name it."""

    kind: EditKind
    output: str
    change: str
    markers: tuple[str, ...]
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for a record's metadata."""
        return {"kind": self.kind, "change": self.change, "markers": list(self.markers),
                "detail": self.detail, "output": self.output}


def make_edit(kind: EditKind, output: str, reference: str = "", task: str = "") -> Edit | None:
    """None when the rule does not apply to this output (no number, no colour word ...)."""
    if kind not in KINDS:
        raise ValueError(f"unknown edit kind {kind!r}: one of {', '.join(KINDS)}")
    before, body, after = _unfence(output)
    if not body.strip():
        return None
    structured = _parse_json(before, body, after)
    if structured is not None:
        found = _json_edit(kind, structured, output, reference, task)
    else:  # prose, or a fenced block of prose: edited inside its fence
        found = _TEXT_RULES[kind](body, reference, task)
    if found is None:
        return None
    edited, change, words = found
    if structured is None:
        edited = before + edited + after
    markers = tuple(dict.fromkeys(m.lower() for m in words if m.strip()))
    if edited == output or not markers:
        return None
    return Edit(kind, edited, change, markers, DETAIL[kind])


def named(edit: Edit, details: Mapping[str, Any]) -> bool:
    """Whether an item of details[edit.detail] mentions one of the markers (case-insensitive,
    whole words; items may be strings or small dicts/lists: search their JSON text)."""
    if not isinstance(details, Mapping) or not edit.markers:
        return False
    items = details.get(edit.detail)
    if items is None:
        return False
    words = "|".join(r"\s+".join(map(re.escape, m.split())) for m in edit.markers)
    pattern = re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.IGNORECASE)
    for item in items if isinstance(items, list | tuple) else [items]:
        if isinstance(item, str):
            text = item
        else:
            try:
                text = json.dumps(item, ensure_ascii=False, default=str)
            except (ValueError, TypeError, RecursionError):
                continue
        if pattern.search(text):
            return True
    return False


# --- words ----------------------------------------------------------------------------------

def _case_like(original: str, new: str) -> str:
    """`new` written in the case of `original` (THREE, Three, three)."""
    if len(original) > 1 and original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def _plural(word: str) -> str:
    if word in IRREGULAR:
        return IRREGULAR[word]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _is_plural(word: str) -> bool:
    return word in SINGULAR or (len(word) > 2 and word.endswith("s")
                                and not word.endswith(("ss", "us", "is", "ous")))


def _singular(word: str) -> str:
    if word in SINGULAR:
        return SINGULAR[word]
    if not _is_plural(word):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    return word[:-1]


def _forms(word: str) -> list[str]:
    """A noun as written and in its other number, stop words left out ("cans" gives "cans",
    not the modal "can")."""
    word = word.lower()
    if not word:
        return []
    if _is_plural(word):
        other = _singular(word)
    elif word in ADJECTIVES or (len(word) > 4 and word.endswith(("ed", "ing", "ly", "ous",
                                                                  "ful"))):
        other = word  # an adjective or verb has no plural ("potted")
    else:
        other = _plural(word)
    return list(dict.fromkeys(w for w in (word, other) if w not in STOP))


def _content(text: str) -> list[str]:
    """The words that carry content: no stop words, numbers or colour words."""
    words = (w.lower() for w in _CONTENT.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in STOP
                              and w not in NUMBER_WORDS and w not in COLOURS))


def _noun_after(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the noun described by the number or colour ending at `pos`: the first of
    the next few words that is not a colour or an adjective, unless a stop word comes first."""
    for _ in range(4):
        match = _NEXT_WORD.match(text, pos)
        if match is None:
            return None
        word = match.group(1).lower()
        if word in COLOURS or word in ADJECTIVES:
            pos = match.end()
            continue
        if word in STOP or word in NUMBER_WORDS:
            return None
        return match.span(1)
    return None


def _word_before(text: str, pos: int) -> str:
    match = _LAST_WORD.search(text[max(0, pos - 40):pos])
    return match.group(1).lower() if match else ""


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _first_best(scores: list[int]) -> int:
    """The index of the first highest score: the first candidate unless the reference
    confirms a later one."""
    return scores.index(max(scores))


def _pick(candidates: list[Any], scores: list[int], output: str) -> Any:
    """The first best-scored candidate; with no score above 0, one chosen by the output's
    hash (the same output always gets the same one)."""
    best = max(scores)
    if best > 0:
        return candidates[scores.index(best)]
    return candidates[int.from_bytes(_digest(output)[:8], "big") % len(candidates)]


# --- count ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Count:
    start: int
    end: int
    value: int
    digits: bool
    noun: tuple[int, int] | None


def _count_sites(text: str) -> list[_Count]:
    """Counts in `text`, in order: digits or number words, not labels, measures, list
    numbers, decimals or the pronoun "one"."""
    sites = []
    for match in _COUNT.finditer(text):
        written = match.group(0)
        digits = match.group("digits") is not None
        before = _word_before(text, match.start())
        after = _NEXT_WORD.match(text, match.end())
        next_word = after.group(1).lower() if after else ""
        if before in LABELS or next_word in UNITS:
            continue
        if digits:
            line_start = text.rfind("\n", 0, match.start()) + 1
            if not text[line_start:match.start()].strip() and _LIST_NUMBER.match(text,
                                                                                  match.end()):
                continue  # "1. A cat ..." numbers a list
        elif written.lower() == "one" and (
                before in {"the", "this", "that", "which", "each", "every", "any", "no",
                           "another", "other", "only", "single"}
                or next_word in {"of", "another"}):
            continue
        value = int(written) if digits else NUMBER_WORDS.index(written.lower()) + 1
        sites.append(_Count(match.start(), match.end(), value, digits,
                            _noun_after(text, match.end())))
    return sites


def _count_key(text: str, site: _Count) -> tuple[int, str]:
    noun = text[site.noun[0]:site.noun[1]].lower() if site.noun else ""
    return site.value, _singular(noun)


def _count_scores(keys: list[tuple[int, str]], reference: str) -> list[int]:
    """Per (number, noun): 2 when the reference gives that count of that noun, 1 when it
    gives the number alone, -1 when it gives another count of that noun: that count is
    wrong already, and raising it would not make a right statement wrong."""
    ref = {_count_key(reference, s) for s in _count_sites(reference)}
    values = {value for value, _ in ref}
    counted = {noun for _, noun in ref if noun}
    return [2 if key in ref else -1 if key[1] and key[1] in counted else
            1 if key[0] in values else 0 for key in keys]


def _number_word(value: int) -> str:
    """1 to 21 in words; "" for other numbers."""
    if 1 <= value <= len(NUMBER_WORDS):
        return NUMBER_WORDS[value - 1]
    return "twenty-one" if value == 21 else ""


def _number_written(value: int, digits: bool, like: str) -> str:
    """`value` as the edited count was written: digits, or words in its case."""
    return str(value) if digits else _case_like(like, _number_word(value))


def _apply_count(text: str, site: _Count) -> tuple[str, str, list[str]]:
    new_value = site.value + 1
    old = text[site.start:site.end]
    new = _number_written(new_value, site.digits, old)
    markers = [new, _number_word(new_value) if site.digits else str(new_value)]
    end = site.end
    tail = ""
    if site.noun:
        end = site.noun[1]
        noun = text[site.noun[0]:site.noun[1]]
        tail = text[site.end:site.noun[1]]
        if site.value == 1 and not _is_plural(noun.lower()):
            tail = text[site.end:site.noun[0]] + _case_like(noun, _plural(noun.lower()))
        markers += _forms(noun)
    edited = text[:site.start] + new + tail + text[end:]
    change = f'count: "{excerpt(text[site.start:end])}" -> "{excerpt(new + tail)}"'
    return edited, change, markers


def _text_count(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    sites = _count_sites(output)
    if not sites:
        return None
    scores = _count_scores([_count_key(output, s) for s in sites], reference)
    if max(scores) < 0:  # every count is one the reference contradicts
        return None
    return _apply_count(output, sites[_first_best(scores)])


# --- colour ---------------------------------------------------------------------------------

def _colour_sites(text: str) -> list[re.Match[str]]:
    sites = []
    for match in _COLOUR.finditer(text):
        if match.group(0).lower() == "orange" and _word_before(text, match.start()) in {
                "an", "the", "this", "that", "one", "each", "every"} \
                and _noun_after(text, match.end()) is None:
            continue  # "an orange" on the table is the fruit
        sites.append(match)
    return sites


def _canonical(colour: str) -> str:
    return "grey" if colour.lower() == "gray" else colour.lower()


def _apply_colour(text: str, match: re.Match[str]) -> tuple[str, str, list[str]]:
    old = match.group(0)
    used = {_canonical(c) for c in _COLOUR.findall(text)}
    choices = COLOURS[old.lower()]
    new = _case_like(old, next((c for c in choices if c not in used), choices[0]))
    start, prefix = match.start(), ""
    article = _ARTICLE.search(text[max(0, start - 10):start])
    if article:  # "a blue square" -> "an orange square"
        start -= len(article.group(0))
        word = "an" if new[:1].lower() in "aeiou" else "a"
        prefix = _case_like(article.group(1), word) + article.group(2)
    noun = _noun_after(text, match.end())
    end = noun[1] if noun else match.end()
    replacement = prefix + new + text[match.end():end]
    markers = [new] + (_forms(text[noun[0]:noun[1]]) if noun else [])
    change = f'colour: "{excerpt(text[start:end])}" -> "{excerpt(replacement)}"'
    return text[:start] + replacement + text[end:], change, markers


def _colour_scores(colours: list[str], reference: str) -> list[int]:
    ref = {_canonical(c) for c in _COLOUR.findall(reference)}
    return [1 if _canonical(c) in ref else 0 for c in colours]


def _text_colour(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    sites = _colour_sites(output)
    if not sites:
        return None
    scores = _colour_scores([m.group(0) for m in sites], reference)
    return _apply_colour(output, sites[_first_best(scores)])


# --- object ---------------------------------------------------------------------------------

def _absent_object(output: str, reference: str, task: str) -> str | None:
    """The first object, in an order seeded by the output's hash, that neither the output,
    the reference nor the task mentions (in its full name or head noun, either number)."""
    seed = _digest(output).hex()
    said = "\n".join((output, reference, task))
    for name in sorted(OBJECTS, key=lambda n: _digest(seed + n)):
        words = name.split()
        names = r"\s+".join(words) + (f"|{words[-1]}" if len(words) > 1 else "")
        if not re.search(rf"(?<!\w)(?:{names})(?:s|es)?(?!\w)", said, re.IGNORECASE):
            return name
    return None


def _object_markers(name: str) -> list[str]:
    head = name.split()[-1]
    return [name, head, _plural(head)]


def _append_sentence(text: str, sentence: str) -> str:
    """`sentence` after the text: as a new item when the text ends in a list."""
    body = text.rstrip()
    tail = text[len(body):]
    bullet = _BULLET.match(body.rsplit("\n", 1)[-1])
    if bullet and "\n" in body:
        prefix = bullet.group(0)
        if bullet.group("n"):
            number = bullet.group("n")
            prefix = prefix.replace(number, str(int(number) + 1), 1)
        return f"{body}\n{prefix}{sentence}{tail}"
    stop = "" if body.rstrip("\"'”’)]").endswith(tuple(".!?")) else "."
    return f"{body}{stop} {sentence}{tail}"


def _text_object(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    name = _absent_object(output, reference, task)
    if name is None:
        return None
    sentence = OBJECTS[name]
    return (_append_sentence(output, sentence), f'object: added "{sentence}"',
            _object_markers(name))


# --- missing --------------------------------------------------------------------------------

def _overlap(words: list[str], reference_words: set[str]) -> int:
    return len({_singular(w) for w in words} & reference_words)


def _markers_of(words: list[str]) -> list[str]:
    markers: list[str] = []
    for word in words[:MAX_MARKERS]:
        markers += _forms(word)
    return markers


def _text_missing(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    """Leave out one sentence, or, with a single sentence of content, one of its clauses."""
    core = output.strip()
    lead = output[:len(output) - len(output.lstrip())]
    trail = output[len(output.rstrip()):]
    pieces = _sentences(core)
    reference_words = {_singular(w) for w in _content(reference)}
    contents = {i: _content(pieces[i]) for i in range(0, len(pieces), 2)}
    full = [i for i, words in contents.items() if words]
    if len(full) >= 2:
        scores = [_overlap(contents[i], reference_words) for i in full]
        index = _pick(full, scores, output)
        removed = pieces[index]
        if index == len(pieces) - 1:
            kept = pieces[:index - 1]
        else:
            kept = pieces[:index] + pieces[index + 2:]
        change = f'missing: removed "{excerpt(removed.strip())}"'
        return lead + "".join(kept) + trail, change, _markers_of(contents[index])
    if len(full) != 1:
        return None
    index = full[0]
    sentence = pieces[index]
    shortened = _drop_clause(sentence, reference_words, output)
    if shortened is None:
        return None
    text, removed, words = shortened
    pieces[index] = text
    return (lead + "".join(pieces) + trail, f'missing: removed "{excerpt(removed)}"',
            _markers_of(words))


def _sentences(text: str) -> list[str]:
    """[sentence, separator, sentence, ...]: split after . ! ? and at line ends, but not
    after a list number ("2. A plate") or a common abbreviation ("e.g. a cup")."""
    pieces = _SENTENCES.split(text)
    merged = [pieces[0]]
    for i in range(1, len(pieces), 2):
        last = merged[-1]
        if "\n" not in pieces[i] and (_LIST_ITEM.fullmatch(last)
                                      or f" {last.lower()}".endswith(ABBREVIATIONS)):
            merged[-1] = last + pieces[i] + pieces[i + 1]
        else:
            merged += [pieces[i], pieces[i + 1]]
    return merged


def _drop_clause(sentence: str, reference_words: set[str],
                 output: str) -> tuple[str, str, list[str]] | None:
    """The sentence without one clause, split at the first separator whose every part has
    content ("a black and white cat" is not two clauses); capitalised, with its full stop."""
    body = sentence.rstrip(_TERMINAL)
    terminal = sentence[len(body):] or "."
    for separator in _CLAUSES:
        parts = body.split(separator)
        words = [_content(p) for p in parts]
        if len(parts) < 2 or not all(words):
            continue
        index = _pick(list(range(len(parts))),
                      [_overlap(w, reference_words) for w in words], output)
        rest = separator.join(parts[:index] + parts[index + 1:]).strip()
        if body[:1].isupper():
            rest = rest[:1].upper() + rest[1:]
        return rest + terminal, parts[index].strip(), words[index]
    return None


# --- structured (JSON) answers --------------------------------------------------------------

@dataclass
class _Structured:
    """A JSON answer and how to write it back as the candidate wrote it."""

    data: Any
    before: str
    after: str
    indent: int | None

    def dump(self) -> str:
        return self.before + json.dumps(self.data, ensure_ascii=False,
                                        indent=self.indent) + self.after


def _parse_json(before: str, body: str, after: str) -> _Structured | None:
    """The (unfenced) body as one JSON object or array, else None."""
    stripped = body.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    lead = body[:len(body) - len(body.lstrip())]
    trail = body[len(body.rstrip()):]
    return _Structured(data, before + lead, trail + after, 2 if "\n" in stripped else None)


def _unfence(output: str) -> tuple[str, str, str]:
    """(opening fence, body, closing fence) of a fenced answer; ("", output, "") otherwise.
    Scanned by hand: a fence regex backtracks quadratically over long blank runs."""
    stripped = output.strip()
    newline = stripped.find("\n")
    if (len(stripped) < 7 or not stripped.startswith("```") or not stripped.endswith("```")
            or newline < 0 or not _FENCE_OPENING.fullmatch(stripped[:newline])):
        return "", output, ""
    lead = len(output) - len(output.lstrip())
    start, end = lead + newline + 1, lead + len(stripped) - 3
    if end < start:
        return "", output, ""
    return output[:start], output[start:end], output[end:]


def _leaves(data: Any) -> list[tuple[Any, Any, Any]]:
    """(container, key, value) of every value in document order, containers included; the
    root as (None, None, root). Iterative: a deep document does not exhaust the stack."""
    found: list[tuple[Any, Any, Any]] = [(None, None, data)]
    stack = [iter(_children(data))]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        found.append(child)
        stack.append(iter(_children(child[2])))
    return found


def _children(node: Any) -> list[tuple[Any, Any, Any]]:
    if isinstance(node, dict):
        return [(node, k, v) for k, v in node.items()]
    if isinstance(node, list):
        return [(node, i, v) for i, v in enumerate(node)]
    return []


_COUNT_KEY_WORDS = frozenset({"count", "counts", "number", "num", "total", "quantity", "n",
                              "how", "many"})


def _count_key_noun(key: Any) -> str | None:
    """For an integer under `key`: "" when the key names a count without a noun ("count"),
    the noun when it names one ("people_count", "cars"), None when it is no count ("x")."""
    if not isinstance(key, str):
        return None
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", key)]
    nouns = [w for w in words if w not in _COUNT_KEY_WORDS and w not in STOP]
    if any(w in _COUNT_KEY_WORDS for w in words):
        return nouns[-1] if nouns else ""
    if len(words) == 1 and nouns and _is_plural(nouns[0]):
        return nouns[0]
    return None


def _json_edit(kind: str, answer: _Structured, output: str, reference: str,
               task: str) -> tuple[str, str, list[str]] | None:
    try:
        found = _JSON_RULES[kind](answer, output, reference, task)
        return None if found is None else (answer.dump(), *found)
    except (ValueError, RecursionError):  # a document too deep to write back
        return None


def _json_count(answer: _Structured, output: str, reference: str,
                task: str) -> tuple[str, list[str]] | None:
    sites: list[tuple[Any, Any, Any, _Count | None]] = []
    keys: list[tuple[int, str]] = []
    for container, key, value in _leaves(answer.data):
        if isinstance(value, str):
            for found in _count_sites(value):
                sites.append((container, key, value, found))
                keys.append(_count_key(value, found))
        elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1000:
            noun = _count_key_noun(key)
            if noun is not None:
                sites.append((container, key, value, None))
                keys.append((value, _singular(noun)))
    if not sites:
        return None
    scores = _count_scores(keys, reference)
    if max(scores) < 0:
        return None
    container, key, value, site = sites[_first_best(scores)]
    if site is not None:
        container[key], change, markers = _apply_count(value, site)
        return change, markers
    container[key] = value + 1
    noun = _count_key_noun(key) or ""
    return (f'count: "{key}": {value} -> {value + 1}',
            [str(value + 1), _number_word(value + 1)] + _forms(noun))


def _json_colour(answer: _Structured, output: str, reference: str,
                 task: str) -> tuple[str, list[str]] | None:
    sites = [(container, key, value, match) for container, key, value in _leaves(answer.data)
             if isinstance(value, str) for match in _colour_sites(value)]
    if not sites:
        return None
    scores = _colour_scores([s[3].group(0) for s in sites], reference)
    container, key, value, match = sites[_first_best(scores)]
    container[key], change, markers = _apply_colour(value, match)
    return change, markers


def _json_object(answer: _Structured, output: str, reference: str,
                 task: str) -> tuple[str, list[str]] | None:
    """The object's name added to the first list of strings, else its sentence added to
    the first string that is a sentence."""
    name = _absent_object(output, reference, task)
    if name is None:
        return None
    leaves = _leaves(answer.data)
    for _, _, value in leaves:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value.append(name)
            return f'object: added "{name}" to a list', _object_markers(name)
    for container, key, value in leaves:
        if container is not None and isinstance(value, str) and len(value.split()) >= 3:
            container[key] = _append_sentence(value, OBJECTS[name])
            return f'object: added "{OBJECTS[name]}"', _object_markers(name)
    return None


def _item_text(item: Any) -> str:
    return " ".join(v for _, _, v in _leaves(item) if isinstance(v, str))


def _json_missing(answer: _Structured, output: str, reference: str,
                  task: str) -> tuple[str, list[str]] | None:
    """One item left out of the first list of two or more items with content, else one
    sentence or clause left out of the first string where that applies."""
    reference_words = {_singular(w) for w in _content(reference)}
    leaves = _leaves(answer.data)
    for _, _, value in leaves:
        if not isinstance(value, list) or len(value) < 2:
            continue
        words = [_content(_item_text(item)) for item in value]
        full = [i for i, w in enumerate(words) if w]
        if not full:
            continue
        index = _pick(full, [_overlap(words[i], reference_words) for i in full], output)
        removed = value.pop(index)
        shown = removed if isinstance(removed, str) else json.dumps(removed, ensure_ascii=False)
        return f'missing: removed "{excerpt(shown)}" from a list', _markers_of(words[index])
    for container, key, value in leaves:
        if container is not None and isinstance(value, str):
            found = _text_missing(value, reference, task)
            if found is not None:
                container[key] = found[0]
                return found[1], found[2]
    return None


_TEXT_RULES = {"count": _text_count, "object": _text_object, "missing": _text_missing,
               "colour": _text_colour}
_JSON_RULES = {"count": _json_count, "object": _json_object, "missing": _json_missing,
               "colour": _json_colour}
