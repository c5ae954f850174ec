"""One HallusionBench question as the metrics group it: its figure, its question group, its
set, and the names the paper's code gives them.

The paper keys everything by underscore-joined fields ([P] utils.py): a question by
category, subcategory, set, figure and question (`get_eval_all`, line 174), a figure by
category, subcategory, set and figure (`get_eval_fig`, line 137), a question group (the same
question across the set's figures) by category, subcategory, set and question
(`get_eval_pair_all`, line 222). A set (category, subcategory, set) holds both a figure's
questions and a question's figures, so it is the unit the intervals resample."""

from __future__ import annotations

from dataclasses import dataclass

from visioneval.benchmarks.hallusionbench.spec import ANSWERS, CATEGORIES, VISUAL_INPUTS


@dataclass(frozen=True)
class Item:
    category: str
    subcategory: str
    visual_input: str
    set_id: str
    figure_id: str
    question_id: str
    question: str
    gt_answer: str  # "1" yes, "0" no
    gt_answer_details: str

    @property
    def key(self) -> str:
        """The question's name, e.g. VD_illusion_0_1_2 ([P] utils.py:174)."""
        return "_".join((self.category, self.subcategory, self.set_id, self.figure_id,
                         self.question_id))

    @property
    def l2(self) -> str:
        """Category and subcategory, as VLMEvalKit's `l2-category` (VD_illusion)."""
        return f"{self.category}_{self.subcategory}"

    @property
    def set_key(self) -> str:
        return f"{self.l2}_{self.set_id}"

    @property
    def figure_key(self) -> str:
        return f"{self.set_key}_{self.figure_id}"

    @property
    def question_key(self) -> str:
        return f"{self.set_key}_{self.question_id}"

    @property
    def has_image(self) -> bool:
        return self.visual_input != "0"

    @property
    def no_figure(self) -> bool:
        """A VS question asked with no figure: the paper counts its "unclear" as correct and
        leaves it out of the figures ([P] utils.py:407 and :135 test figure_id 0)."""
        return self.category == "VS" and self.figure_id == "0"

    @property
    def hard(self) -> bool:
        """Asked on an edited figure: the paper's "hard" question pairs ([P] utils.py:378);
        the rest are "easy" (line 346)."""
        return self.visual_input == "2"

    def metadata(self) -> dict[str, str]:
        """What a record keeps of the item (all but the texts, which the sample holds)."""
        return {"item": self.key, "category": self.category, "subcategory": self.subcategory,
                "visual_input": self.visual_input, "set_id": self.set_id,
                "figure_id": self.figure_id, "question_id": self.question_id,
                "gt_answer": self.gt_answer}

    @classmethod
    def from_metadata(cls, meta: dict, question: str = "", details: str = "") -> Item:
        return cls(str(meta["category"]), str(meta["subcategory"]),
                   str(meta["visual_input"]), str(meta["set_id"]), str(meta["figure_id"]),
                   str(meta["question_id"]), question, str(meta["gt_answer"]), details)


def parse_row(values: dict) -> Item:
    """The item a dataset row holds; ValueError naming the column that cannot be used."""
    text: dict[str, str] = {}
    for column in ("category", "subcategory", "visual_input", "set_id", "figure_id",
                   "question_id", "question", "gt_answer", "gt_answer_details"):
        value = values.get(column)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"column {column!r} is empty or not text")
        text[column] = value if column in ("question", "gt_answer_details") else value.strip()
    for column, allowed in (("category", CATEGORIES), ("visual_input", VISUAL_INPUTS),
                            ("gt_answer", ANSWERS)):
        if text[column] not in allowed:
            raise ValueError(f"column {column!r} is {text[column]!r}, not one of "
                             f"{', '.join(allowed)}")
    return Item(**text)
