"""`--variant blind` and `--variant blank` as NaturalBench reads them: the same image
removal as every benchmark's, but NaturalBench's own metrics read these families too, so
that Q-Acc, I-Acc and G-Acc without the image stand beside their chance levels (a group's
four answers are needed for G-Acc, which a per-answer comparison cannot give)."""

from __future__ import annotations

from visioneval.variants.kinds import Blank, Blind


class GroupedBlind(Blind):
    read_by_benchmark = True


class GroupedBlank(Blank):
    read_by_benchmark = True


def controls() -> dict[str, Blind | Blank]:
    return {"blind": GroupedBlind(), "blank": GroupedBlank()}
