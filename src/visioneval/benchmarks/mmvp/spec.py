"""MMVP's fixed facts (Tong, Liu, Zhai, Ma, LeCun and Xie, "Eyes Wide Shut? Exploring the
Visual Shortcomings of Multimodal LLMs", CVPR 2024, arXiv 2401.06209).

Sources (docs/mmvp.md cites each):
- [P] github tsb0601/MMVP at 7635005 (2024-01-27): README.md (the dataset's layout),
  scripts/evaluate_mllm.py (prompt, generation), scripts/gpt_grader.py (grading, pairs).
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cfe: lmms_eval/tasks/mmvp/ (utils.py, the yaml,
  README.md: its dataset copy's label changes).
- [V] open-compass/VLMEvalKit at e8e78f05: vlmeval/dataset/image_mcq.py (build_prompt,
  evaluate_heuristic), vlmeval/dataset/utils/multiple_choice.py (report_acc_MMVP).
"""

from __future__ import annotations

HF_REPO = "MMVP/MMVP"
LMMS_EVAL_REPO = "lmms-lab-eval/MMVP"
QUESTIONS_FILE = "Questions.csv"
IMAGES_FOLDER = "MMVP Images"
CSV_COLUMNS = ("Index", "Question", "Options", "Correct Answer")
PARQUET_COLUMNS = (*CSV_COLUMNS, "image")
QUESTIONS = 300
PAIRS = 150
GROUP = "MMVP"

PROTOCOLS = ("paper", "lmms-eval", "vlmevalkit")
REFERENCE = "paper"

# lmms-eval's copy of the data (lmms-lab-eval/MMVP) changes four labels ([L] README.md lines
# 15-20, utils.py lines 11-18, 1-based Index): Index -> (published label, lmms-eval's label).
LMMS_EVAL_CHANGES = {99: ("(a)", "(b)"), 100: ("(b)", "(a)"), 279: ("(a)", "(b)"),
                     280: ("(b)", "(a)")}

# The paper reading's outcomes besides a letter (readings.paper).
AMBIGUOUS = "names both options"
UNPARSED = "names no option"
UNDETERMINED = "Could not determine yes or no."  # the paper's grader, gpt_grader.py line 46

# A record's score blocks: `P` against P's own labels, `P/corrected` against the corrected ones.
CORRECTED = "corrected"


def score_key(protocol: str, label_set: str) -> str:
    """The score block of `protocol` under `label_set` ("original" or "corrected")."""
    return f"{protocol}/{CORRECTED}" if label_set == CORRECTED else protocol


# How each reference implementation generates (the run's own settings are recorded beside).
PAPER_GENERATION = ("sampled at temperature 0.2 (top_p None, 1 beam), at most 1024 new tokens "
                    "(scripts/evaluate_mllm.py lines 85-95, 130-132)")
LMMS_EVAL_GENERATION = ("greedy (temperature 0, do_sample false), at most 16 new tokens "
                        "(lmms_eval/tasks/mmvp/_default_template_yaml lines 25-28)")
VLMEVALKIT_GENERATION = "each model wrapper's own settings (VLMEvalKit sets none for MMVP)"
