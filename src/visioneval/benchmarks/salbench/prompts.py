"""SalBench prompts: the dataset's question verbatim (zero-shot) and the authors' few-shot layout.

Few-shot layout, from the authors' figures (salbench/salbench images/p3_1..3, o3_1..3): the
feature-list context, "For examples:", k (image, caption) pairs whose captions state the
answer, the query image, then the "Task: ..." part. The paper does not say how examples were
picked; our choice is in `choose_examples` and docs/salbench.md.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from visioneval.benchmarks.salbench.spec import LMMS_EVAL_SUFFIX, ConfigSpec
from visioneval.core.records import Message, user
from visioneval.io.images import Image

PROMPT_STYLES = ("paper", "lmms-eval")
HEADLINE_PROMPT = "paper"


def prompt_families(choice: str) -> tuple[str, ...]:
    """The prompt styles a run sends, the headline first: `both` sends the paper's and
    lmms-eval's for every row, as two request families on the same images."""
    return PROMPT_STYLES if choice == "both" else (choice,)


def family_group(config: str, family: str, families: tuple[str, ...]) -> str:
    """A sample's group: the config for the run's first prompt family (its headline), and
    "<config> lmms-eval prompt" for a second family, so progress, cost and the viewer keep
    the families apart and the metrics read the headline alone under the config's name."""
    return config if family == families[0] else f"{config} {family} prompt"


def family_id(base: str, family: str, families: tuple[str, ...]) -> str:
    """A sample's id: the row's own for the first family (so a `both` run's headline samples
    pair with a paper-prompt run's), "<id>@<family>" for a second family."""
    return base if family == families[0] else f"{base}@{family}"

_FEATURE_SENTENCE = re.compile(
    r"Given this list of low[- ]level visual features defined according to "
    r"feature integration theory:\s*[^.]*\.", re.IGNORECASE)
_BBOX = re.compile(r"x_min=[\d.]+,\s*y_min=[\d.]+,\s*x_max=[\d.]+,\s*y_max=[\d.]+")
_MARKERS = re.compile(r"\b(?:Context|Task):\s*")


@dataclass(frozen=True)
class Example:
    """A few-shot example: its image, its own question (for the bbox) and its labels."""

    row: int
    image: Image
    question: str
    labels: tuple[str, ...]


def zero_shot(question: str, image: Image, style: str) -> tuple[Message, ...]:
    """The query image, then the dataset's question (plus lmms-eval's suffix if asked)."""
    text = question.strip() + LMMS_EVAL_SUFFIX if style == "lmms-eval" else question
    return (user(image, text),)


def split_question(question: str, spec: ConfigSpec) -> tuple[str, str]:
    """(context line, task text) of a dataset question, for the few-shot layout.

    The context is the question's own feature-list sentence; the task is everything else
    with the "Context:"/"Task:" markers removed. Questions without a feature-list sentence
    get one built from the class list."""
    match = _FEATURE_SENTENCE.search(question)
    if match:
        sentence = match.group(0)
        rest = question[:match.start()] + " " + question[match.end():]
    else:
        names = ", ".join(c.capitalize() for c in spec.classes)
        sentence = ("Given this list of low level visual features defined according to "
                    f"feature integration theory: {names}.")
        rest = question
    rest = re.sub(r"\s+", " ", _MARKERS.sub("", rest)).strip()
    return f"Context: {sentence}", f"Task: {rest}"


def caption(spec: ConfigSpec, example: Example) -> str:
    """A caption that states the example's answer, in the authors' wording per task."""
    features = ", ".join(label.lower() for label in example.labels)
    if spec.task == "D":
        # Authors' O3 Detection example, grammar as published.
        return f"This image shows an object with different {features} compares to the others."
    if spec.task == "R":
        bbox = _BBOX.search(example.question)
        where = f"at location given by this bounding box {bbox.group(0)}" if bbox else \
            "at the given location"
        return f"The object {where} is different in {features} compared to the others."
    return (f"The object highlighted in the red box is different in {features} compared to "
            "the others.")


def few_shot(spec: ConfigSpec, question: str, image: Image, examples: Sequence[Example],
             style: str) -> tuple[Message, ...]:
    context, task = split_question(question, spec)
    if style == "lmms-eval":
        task += LMMS_EVAL_SUFFIX
    parts: list[str | Image] = [f"{context}\nFor examples:"]
    for example in examples:
        parts += [example.image, caption(spec, example)]
    parts += [image, task]
    return (user(*parts),)


@dataclass(frozen=True)
class ExamplePlan:
    """The fixed examples of one config, and a stand-in for each should it be the query."""

    rows: tuple[int, ...]
    spares: dict[int, int]

    def for_query(self, query_row: int) -> list[int]:
        """The examples for one query, never the query itself (dropped if it has no spare)."""
        rows = [self.spares.get(r, r) if r == query_row else r for r in self.rows]
        return [r for r in rows if r != query_row]


def choose_examples(labels_by_row: dict[int, frozenset[str]], classes: Sequence[str], k: int,
                    seed: int, config: str) -> ExamplePlan:
    """k examples fixed per config (the authors reuse the same examples across queries):
    classes are visited in a seeded order, one example each, cycling when k exceeds the class
    count; single-label rows are preferred so each caption teaches one class. Each example
    gets a spare with the same labels, used when the example is itself the query."""
    rng = random.Random(f"{seed}/{config}")
    order = list(classes)
    rng.shuffle(order)
    taken: set[int] = set()
    rows: list[int] = []
    candidates = {c: sorted(r for r, labels in labels_by_row.items() if c in labels)
                  for c in order}
    for slot in range(k * len(order)):  # bounded: each class is visited at most k times
        if len(rows) == k:
            break
        pool = [r for r in candidates[order[slot % len(order)]] if r not in taken]
        if not pool:
            continue
        single = [r for r in pool if len(labels_by_row[r]) == 1]
        pick = rng.choice(single or pool)
        rows.append(pick)
        taken.add(pick)
    spares = {}
    for row in rows:
        same = [r for r, labels in labels_by_row.items()
                if labels == labels_by_row[row] and r not in taken]
        if same:
            spares[row] = rng.choice(sorted(same))
            taken.add(spares[row])
    return ExamplePlan(tuple(rows), spares)
