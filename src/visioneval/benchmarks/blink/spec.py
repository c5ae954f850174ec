"""BLINK's fixed facts (Fu, Hu, Li, Feng, Wang, Lin, Roth, Smith, Ma and Krishna, "BLINK:
Multimodal Large Language Models Can See but Not Perceive", ECCV 2024, arXiv 2404.12390).

Sources (docs/blink.md cites each):
- [P] github zeyofu/BLINK_Benchmark at 2d6a779 (2024-07-03): eval/test_benchmark.py (prompt,
  disclaimer, `analyze_answer`), eval/query_model.py (generation), eval/evaluate.py (the
  unweighted mean over tasks), README.md (the mini-leaderboard).
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cfe: lmms_eval/tasks/blink/ (utils.py, the yaml).
- [V] open-compass/VLMEvalKit at e8e78f05: vlmeval/dataset/image_mcq.py (build_prompt),
  vlmeval/dataset/utils/multiple_choice.py (report_acc), vlmeval/utils/matching_util.py.
"""

from __future__ import annotations

HF_REPO = "BLINK-Benchmark/BLINK"
SPLIT = "val"
# The 14 configs, in [P] README.md's order (line 38); each is one parquet file per split,
# `<Task>/val-00000-of-00001.parquet`.
TASKS = ("Art_Style", "Functional_Correspondence", "Multi-view_Reasoning",
         "Relative_Reflectance", "Visual_Correspondence", "Counting", "IQ_Test",
         "Object_Localization", "Semantic_Correspondence", "Visual_Similarity",
         "Forensic_Detection", "Jigsaw", "Relative_Depth", "Spatial_Relation")
IMAGE_COLUMNS = ("image_1", "image_2", "image_3", "image_4")
COLUMNS = ("idx", "question", "sub_task", "choices", "answer", "prompt", *IMAGE_COLUMNS)

PROTOCOLS = ("paper", "lmms-eval", "vlmevalkit")
REFERENCE = "paper"
# The protocols whose reported number is the mean over every question ([V] report_acc's
# 'Overall'); the others report the unweighted mean of the task accuracies.
MEAN_OVER_QUESTIONS = ("vlmevalkit",)

# [P] eval/test_benchmark.py line 10 (the text) and line 175 (the tasks it goes before).
DISCLAIMER = ("Disclaimer: This is not to make unfair assumptions about the people in the "
              "image and you just need to give your assessment on this question. You don't "
              "need to identify the real people. You just need to analyze based on the "
              "information I gave you.\n\n")
DISCLAIMER_TASKS = ("Forensic_Detection", "Jigsaw", "Art_Style")

# The paper reading's outcome when its rules find no single option (test_benchmark.py lines
# 31-35 then ask gpt-3.5-turbo; without a judge the answer is unread, scored wrong).
UNREAD = "no single option token: left to the paper's GPT-3.5 matcher"

CORRECTED = "corrected"


def score_key(protocol: str, label_set: str) -> str:
    """The score block of `protocol` under `label_set` ("original" or "corrected")."""
    return f"{protocol}/{CORRECTED}" if label_set == CORRECTED else protocol


PAPER_GENERATION = ("temperature 0, at most 1024 tokens, text first then the images at "
                    "detail low (eval/query_model.py lines 27-39)")
LMMS_EVAL_GENERATION = ("at most 1024 new tokens, temperature left to the model wrapper "
                        "(lmms_eval/tasks/blink/_default_template_yaml, generation_kwargs)")
VLMEVALKIT_GENERATION = "each model wrapper's own settings (VLMEvalKit sets none for BLINK)"

# The protocols whose reference asks a judge model for what its rules leave (judging.py),
# and the score key of their judged reading.
JUDGED_PROTOCOLS = ("paper", "vlmevalkit")
JUDGED_SUFFIX = "+judge"


def judged(protocol: str) -> str:
    """`paper+judge`: the protocol read by its rules, then its judge where they read
    nothing."""
    return protocol + JUDGED_SUFFIX
