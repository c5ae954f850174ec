"""CV-Bench's fixed facts (Tong et al., "Cambrian-1: A Fully Open, Vision-Centric
Exploration of Multimodal LLMs", NeurIPS 2024, arXiv 2406.16860).

Sources (docs/cvbench.md cites each with lines):
- [P] github cambrian-mllm/cambrian at 539ffc3: eval/eval/{ade,coco,omni}/*_eval.py (the
  prompt: the dataset's `prompt`, a newline, "Answer with the option's letter from the given
  choices directly."; greedy, 512 new tokens) and *_test.py (`extract_mcq_answer`, the
  accuracy per source).
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cfe: lmms_eval/tasks/cv_bench/ (utils.py,
  _default_template_yaml, cv_bench*.yaml).
- [V] open-compass/VLMEvalKit at e8e78f05: vlmeval/dataset/image_mcq.py (class CVBench,
  lines 1185-1300).
- [HF] huggingface.co/datasets/nyu-visionx/CV-Bench: 2,638 items; `val` renamed `test` in
  bb7c14d; 22409a9 (the card's commit right after) holds test.parquet, config `default`.
"""

from __future__ import annotations

HF_REPO = "nyu-visionx/CV-Bench"
# The card's commit after the rename val -> test (parent bb7c14d "rn val -> test"): the
# full set as one test.parquet (config `default`; test_2d/test_3d came later, eb5a19a).
HF_REVISION = "22409a927ab5cf68e3655023d51694587455fc99"
FILE = "test.parquet"
SPLIT_FILES = ("test_2d.parquet", "test_3d.parquet")  # configs 2D and 3D, later revisions
SPLIT = "test"
ITEMS = 2638

COLUMNS = ("idx", "type", "task", "source", "image", "prompt", "choices", "answer")
OPTIONAL = ("question", "filename", "source_dataset", "source_filename")
SOURCES = ("ADE20K", "COCO", "Omni3D")
TASKS = ("Count", "Relation", "Depth", "Distance")
TYPES = {"ADE20K": "2D", "COCO": "2D", "Omni3D": "3D"}

PROTOCOLS = ("paper", "lmms-eval", "vlmevalkit")
PAPER = "paper"
VLMEVALKIT = "vlmevalkit"
# VLMEvalKit's reading with its judge model asked for what its rules leave (judging.py).
JUDGED = "vlmevalkit+judge"

# The paper's instruction after the dataset prompt ([P] ade_eval.py:36, default at :133).
PAPER_EXTENSION = "Answer with the option's letter from the given choices directly."
# lmms-eval's pre_prompt ([L] _default_template_yaml:18); {} is "A, B, C" for three choices.
LMMS_PRE_PROMPT = ("Note: You only need to respond with {} without providing any "
                   "additional information.\n")

# The paper's combined score 1/2 * [(acc_ADE20K + acc_COCO)/2 + acc_Omni3D] ([L] utils.py:67-79,
# [V] image_mcq.py:1279-1298) as a weighted mean of the sources' accuracies.
SOURCE_WEIGHTS = {"ADE20K": 0.25, "COCO": 0.25, "Omni3D": 0.5}
# The protocol whose headline is the mean over items (lmms-eval's cv_bench_acc); every other
# is compared on the paper's combined score.
MICRO = "lmms-eval"

# What each protocol reports first (its own headline).
HEADLINE = {"paper": "cv_bench", "lmms-eval": "accuracy", "vlmevalkit": "overall_2d"}

PAPER_GENERATION = ("greedy (temperature 0), at most 512 new tokens "
                    "(eval/eval/ade/ade_eval.py:137,140)")
LMMS_EVAL_GENERATION = ("max_new_tokens 1024, temperature left to the model wrapper "
                        "(cv_bench/_default_template_yaml:13-14)")
VLMEVALKIT_GENERATION = "each model wrapper's own settings (CVBench sets none)"


def score_key(protocol: str, label_set: str) -> str:
    """A record's score key: the protocol under the published labels, `<protocol>:corrected`
    under the corrected ones."""
    return protocol if label_set == "original" else f"{protocol}:corrected"
