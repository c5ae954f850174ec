"""The object edit: an object claimed that neither the answer, the reference nor the task
mentions (a COCO category unlikely in the scene, picked in an order seeded by the answer's
hash), as a sentence after the prose, a new item of a list, or a name added to a JSON list."""

from __future__ import annotations

import re

from visioneval.evaluators.edits.structured import Structured, leaves
from visioneval.evaluators.edits.vocabulary import OBJECTS
from visioneval.evaluators.edits.words import digest, plural

_BULLET = re.compile(r"\s*(?:[-*•]|(?P<n>[0-9]{1,3})[.)])\s+")


def _absent_object(output: str, reference: str, task: str) -> str | None:
    """The first object, in an order seeded by the output's hash, that neither the output,
    the reference nor the task mentions (in its full name or head noun, either number)."""
    seed = digest(output).hex()
    said = "\n".join((output, reference, task))
    for name in sorted(OBJECTS, key=lambda n: digest(seed + n)):
        words = name.split()
        names = r"\s+".join(words) + (f"|{words[-1]}" if len(words) > 1 else "")
        if not re.search(rf"(?<!\w)(?:{names})(?:s|es)?(?!\w)", said, re.IGNORECASE):
            return name
    return None


def _object_markers(name: str) -> list[str]:
    head = name.split()[-1]
    return [name, head, plural(head)]


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


def text_object(output: str, reference: str, task: str) -> tuple[str, str, list[str]] | None:
    name = _absent_object(output, reference, task)
    if name is None:
        return None
    sentence = OBJECTS[name]
    return (_append_sentence(output, sentence), f'object: added "{sentence}"',
            _object_markers(name))


def json_object(answer: Structured, output: str, reference: str,
                task: str) -> tuple[str, list[str]] | None:
    """The object's name added to the first list of strings, else its sentence added to
    the first string that is a sentence."""
    name = _absent_object(output, reference, task)
    if name is None:
        return None
    nodes = leaves(answer.data)
    for _, _, value in nodes:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value.append(name)
            return f'object: added "{name}" to a list', _object_markers(name)
    for container, key, value in nodes:
        if container is not None and isinstance(value, str) and len(value.split()) >= 3:
            container[key] = _append_sentence(value, OBJECTS[name])
            return f'object: added "{OBJECTS[name]}"', _object_markers(name)
    return None
