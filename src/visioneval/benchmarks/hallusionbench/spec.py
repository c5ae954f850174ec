"""HallusionBench's fixed facts (Guan et al., CVPR 2024, arXiv 2310.14566).

Sources (docs/hallusionbench.md cites them):
- [P] github tianyi-lab/HallusionBench at 744007c: `HallusionBench.json` (1,129 questions:
  the fields below), `evaluation.py` and `utils.py` (the grader, the metrics).
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cf, `lmms_eval/tasks/hallusion_bench/`.
- [V] open-compass/VLMEvalKit at e8e78f0, `vlmeval/dataset/image_yorn.py` and
  `vlmeval/dataset/utils/yorn.py`.
- [HF] huggingface.co/datasets/lmms-lab/HallusionBench: the dataset card's features and
  splits, and the commit its data files were uploaded at.
"""

from __future__ import annotations

HF_REPO = "lmms-lab/HallusionBench"
# The commit that uploaded data/image-*.parquet and data/non_image-*.parquet (2024-01-30);
# main's only later commit changes the card ([HF] commit history).
HF_REVISION = "ea5fd49f1b711d12cc8b0ec75be0c0593e17befe"
SPLITS = ("image", "non_image")  # 951 questions with a figure, 178 without ([HF])

# Every column is a string but `image` (an HF Image struct; null in `non_image`).
TEXT_COLUMNS = ("category", "subcategory", "visual_input", "set_id", "figure_id",
                "sample_note", "question_id", "question", "gt_answer_details", "gt_answer",
                "filename")
COLUMNS = TEXT_COLUMNS + ("image",)

PROTOCOLS = ("paper", "lmms-eval", "vlmevalkit")
REFERENCE = "paper"
# The protocols that ask only questions with a figure: lmms-eval reads the `image` split
# ([L] hallusion_bench_image.yaml:7), VLMEvalKit's HallusionBench.tsv holds 951 rows.
IMAGE_ONLY = ("lmms-eval", "vlmevalkit")

CATEGORIES = ("VD", "VS")  # visual dependent, visual supplement
SUBCATEGORIES = {"VD": ("illusion", "math", "figure", "video", "ocr"),
                 "VS": ("chart", "table", "map", "ocr")}
VISUAL_INPUTS = ("0", "1", "2")  # no figure, the original figure, an edited figure
ANSWERS = ("0", "1")  # gt_answer: no, yes

# The paper's size ([P] HallusionBench.json; the abstract: 346 images, 1,129 questions).
FULL_QUESTIONS = 1129
FULL_IMAGE_QUESTIONS = 951
