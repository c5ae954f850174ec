"""NaturalBench's fixed facts (Li et al., NeurIPS 2024 D&B, arXiv 2410.14669).

Sources (docs/naturalbench.md cites them with lines):
- [R] github Baiqi-Li/NaturalBench at 99676059, `naturalbench_vqa.py`: the suffixes, the
  prompt (question + suffix, no space, line 158), the order of a group's four items
  (lines 158-161), `extract_answer` (lines 9-48) and `get_scores` (lines 50-149).
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cfe, `lmms_eval/tasks/naturalbench/`
  (`naturalbench.yaml`, `utils.py`).
- [V] open-compass/VLMEvalKit at e8e78f05, `vlmeval/dataset/image_mcq.py`
  (`NaturalBenchDataset`, lines 1381-1444) and `vlmeval/dataset/utils/naturalbench.py`.
- [HF] huggingface.co/datasets/BaiqiL/NaturalBench (the card's features: 1,900 rows).
"""

from __future__ import annotations

HF_REPO = "BaiqiL/NaturalBench"
# The dataset card's commit that states 1,900 rows (fc80335, "Update README.md"); the
# parquet files under data/ are read at this commit.
HF_REVISION = "fc803351073c6b80fca97798085f3c4fd6c3ede1"
LMMS_REPO = "BaiqiL/NaturalBench-lmms-eval"  # lmms-eval's flattened copy: 7,600 rows

PROTOCOLS = ("paper", "lmms-eval", "vlmevalkit")
PAPER = "paper"
HARNESSES = ("lmms-eval", "vlmevalkit")
# The prompt each protocol sends: the paper glues the suffix to the question ([R] line 158);
# lmms-eval ([L] utils.py:155,157) and VLMEvalKit ([V] image_mcq.py:1407) put a space
# between them. One request per prompt serves every protocol that sends it.
FAMILY = {"paper": "paper", "lmms-eval": "spaced", "vlmevalkit": "spaced"}
FAMILIES = ("paper", "spaced")

YES_NO = "yes_no"
MULTIPLE_CHOICE = "multiple_choice"
QUESTION_TYPES = (YES_NO, MULTIPLE_CHOICE)
SUFFIX = {YES_NO: "Please answer Yes or No.",
          MULTIPLE_CHOICE: "Please output the letter corresponding to the correct option."}
# The words `extract_answer` looks for: the first reads 1, the second 0 ([R] lines 35-40).
WORDS = {YES_NO: ("yes", "no"), MULTIPLE_CHOICE: ("A", "B")}
# How answers are written in the answer columns and shown: 1 -> Yes / A, 0 -> No / B.
LABELS = {YES_NO: ("No", "Yes"), MULTIPLE_CHOICE: ("B", "A")}

# The four items of a group, in the order every implementation flattens them ([R] lines
# 158-161): (item, question column, image column, answer column).
ITEMS = (("q0_i0", "Question_0", "Image_0", "Image_0_Question_0"),
         ("q0_i1", "Question_0", "Image_1", "Image_1_Question_0"),
         ("q1_i0", "Question_1", "Image_0", "Image_0_Question_1"),
         ("q1_i1", "Question_1", "Image_1", "Image_1_Question_1"))
ITEM_NAMES = tuple(i[0] for i in ITEMS)
# The fixed answer layout `get_scores` assumes and never checks against the answer columns
# ([R] lines 82-118): q0 on image 0 and q1 on image 1 are Yes (A), the other two No (B).
FIXED_LAYOUT = {"q0_i0": 1, "q0_i1": 0, "q1_i0": 0, "q1_i1": 1}

# Columns of a row. The card names the type column `Question Type` at fc80335 and
# `Question_Type` in earlier revisions; the authors' code reads `Question_Type`. Either is
# read.
TYPE_COLUMNS = ("Question_Type", "Question Type")
COLUMNS = ("Image_0", "Image_1", "Question_0", "Question_1")
OPTIONAL = ("Index", "Source", "Image_0_Question_0", "Image_1_Question_0",
            "Image_0_Question_1", "Image_1_Question_1", *TYPE_COLUMNS)

# Chance for guesses drawn independently and uniformly between the two answers: an item
# 1/2, a question's (or an image's) two items 1/4, a group's four 1/16.
CHANCE = {"acc": 0.5, "q_acc": 0.25, "i_acc": 0.25, "g_acc": 0.0625}
METRICS = ("acc", "q_acc", "i_acc", "g_acc")
COUNTS = {"acc": "n_items", "q_acc": "n_questions", "i_acc": "n_images", "g_acc": "n_groups"}
METRIC_NAMES = {"acc": "Acc", "q_acc": "Q-Acc", "i_acc": "I-Acc", "g_acc": "G-Acc"}

LABEL_SET_NAMES = {"original": "fixed layout", "corrected": "answer columns"}


def score_key(protocol: str, label_set: str) -> str:
    """A record's score key: the protocol under the fixed layout, `<protocol>:corrected`
    under the answer columns."""
    return protocol if label_set == "original" else f"{protocol}:corrected"
