"""The paper's counts, kept per set while the journal streams past.

Per set (category, subcategory, set_id) and protocol: the questions scored and right
(`get_eval_all`, [P] utils.py:165-203), its figures (`get_eval_fig`, :130-163: every
question on the figure right; VS questions without a figure left out), its question groups
(`get_eval_pair_all`, :205-338: the same question right on every figure it is asked on, the
no-figure variant included), and the groups restricted to the easy questions (visual_input
not 2, `get_eval_pair_easy`, :340-370) and to the hard ones (visual_input 2,
`get_eval_pair_hard`, :372-402). A group holding a failed request cannot be called right or
wrong: it is left out and counted as incomplete.

A set's counts are one row of numbers; every metric is a ratio of two columns' sums, so the
bootstrap resamples sets (`stats.bootstrap`), keeping each figure and each question group
whole."""

from __future__ import annotations

from dataclasses import dataclass, field

from visioneval.benchmarks.hallusionbench.items import Item

# The row of one set: (counted, right) for questions, figures, groups, easy and hard groups.
COLUMNS = ("questions", "questions_right", "figures", "figures_right", "groups",
           "groups_right", "easy", "easy_right", "hard", "hard_right")
METRICS = (("aAcc", 1, 0), ("fAcc", 3, 2), ("qAcc", 5, 4), ("easy", 7, 6), ("hard", 9, 8))


@dataclass
class Group:
    right: float = 0.0
    total: int = 0
    failed: int = 0

    def add(self, correct: float | None) -> None:
        if correct is None:
            self.failed += 1
        else:
            self.total += 1
            self.right += correct

    @property
    def complete(self) -> bool:
        return not self.failed and self.total > 0

    @property
    def all_right(self) -> bool:
        return self.complete and self.right == self.total


@dataclass
class SetTally:
    """One set's questions, figures and question groups under one protocol."""

    questions: int = 0
    right: float = 0.0
    figures: dict[str, Group] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    easy: dict[str, Group] = field(default_factory=dict)
    hard: dict[str, Group] = field(default_factory=dict)

    def add(self, item: Item, correct: float | None) -> None:
        """One question's verdict (None: its request failed)."""
        if correct is not None:
            self.questions += 1
            self.right += correct
        if not item.no_figure:
            self.figures.setdefault(item.figure_id, Group()).add(correct)
        self.groups.setdefault(item.question_id, Group()).add(correct)
        (self.hard if item.hard else self.easy).setdefault(item.question_id,
                                                           Group()).add(correct)

    def row(self) -> tuple[float, ...]:
        out: list[float] = [self.questions, self.right]
        for groups in (self.figures, self.groups, self.easy, self.hard):
            done = [g for g in groups.values() if g.complete]
            out += [len(done), sum(g.all_right for g in done)]
        return tuple(float(v) for v in out)

    def incomplete(self) -> int:
        """Figures and question groups left out because a request in them failed."""
        return sum(not g.complete for groups in (self.figures, self.groups)
                   for g in groups.values() if g.failed)

    def consistency(self) -> tuple[int, int, int, float]:
        """Figures all right, all wrong, mixed, and the sum of their accuracies (the
        paper's consistency test, [P] evaluation.py:104-107, utils.py:153-160)."""
        right = wrong = mixed = 0
        score = 0.0
        for g in self.figures.values():
            if not g.complete:
                continue
            if g.right == g.total:
                right += 1
            elif g.right == 0:
                wrong += 1
            else:
                mixed += 1
            score += g.right / g.total
        return right, wrong, mixed, score


@dataclass
class YesNoTally:
    """The paper's yes/no bias (`yes_ratio_stats`, [P] utils.py:414-427) and the answers'
    own Yes/No words."""

    n: int = 0
    truth_yes: int = 0
    inferred_yes: int = 0  # correct == gt_answer: the paper's reading of a "yes"
    wrong: int = 0
    wrong_truth_no: int = 0
    said: dict[str, int] = field(default_factory=lambda: {"Yes": 0, "No": 0, "Unknown": 0})

    def add(self, item: Item, correct: float, word: str) -> None:
        yes = item.gt_answer == "1"
        self.n += 1
        self.truth_yes += yes
        self.inferred_yes += int(correct) == int(yes)
        if not correct:
            self.wrong += 1
            self.wrong_truth_no += not yes
        self.said[word if word in self.said else "Unknown"] += 1
