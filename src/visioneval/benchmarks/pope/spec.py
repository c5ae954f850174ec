"""POPE's fixed facts (Li, Du, Zhou, Wang, Zhao and Wen, "Evaluating Object Hallucination in
Large Vision-Language Models", EMNLP 2023, arXiv 2305.10355).

Sources (docs/pope.md cites them line by line):
- [P] github AoiDragon/POPE (mirror RUCAIBox/POPE) at 3df3ba1: `evaluate.py` (the answer
  rule and the metrics), `main.py` (the question template), `output/coco/coco_pope_*.json`
  (3 settings x 500 COCO val2014 images x 6 questions, 3 "yes" and 3 "no" per image).
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cf: `lmms_eval/tasks/pope/` (pope.yaml,
  pope_random.yaml, pope_pop.yaml, pope_adv.yaml, pope_full.yaml, utils.py).
- [V] open-compass/VLMEvalKit at e8e78f0: `vlmeval/dataset/image_yorn.py` and
  `vlmeval/dataset/utils/yorn.py` (`POPE_rating`, `YOrN_Extraction`).
- [H] the Hub copy lmms-eval reads: config `Full` with splits random, popular and
  adversarial (3,000 rows each), and the default config `test` (the 9,000 rows together,
  `category` naming the setting). Columns: id, question_id, question, answer ("yes"/"no"),
  image_source (the COCO file name without ".jpg"), image, category; all text but the image.
"""

from __future__ import annotations

# lmms-eval's dataset_path since its commit 4be7ee0e (2026-07-30, "migrate dataset paths to
# new orgs"); before, lmms-lab/POPE (whose main was commit 4db1276, with the same layout).
HF_REPO = "lmms-lab-encoder/POPE"
EARLIER_REPO = "lmms-lab/POPE"
EARLIER_REVISION = "4db1276663dfa5eb8ad16a52d24c31a09e470896"

# The paper's order of the negative-sampling settings (its tables: Random, Popular,
# Adversarial); they are the Hub's splits of config `Full` and the `category` of `test`.
SETTINGS = ("random", "popular", "adversarial")
# lmms-eval's task per setting ([L] pope_random.yaml, pope_pop.yaml, pope_adv.yaml) and the
# task that pools the 9,000 questions ([L] pope.yaml, split `test`).
LMMS_TASKS = {"random": "pope_random", "popular": "pope_pop", "adversarial": "pope_adv"}
LMMS_POOLED_TASK = "pope"

COLUMNS = ("question_id", "question", "answer", "image_source", "image")
OPTIONAL_COLUMNS = ("id", "category")

PAPER, LMMS, VLMEVALKIT = "paper", "lmms-eval", "vlmevalkit"
PROTOCOLS = (PAPER, LMMS, VLMEVALKIT)
# The prompt each protocol sends, by family: the paper and VLMEvalKit send the question as it
# is ([P] main.py's template "Is there a {} in the image?"; [V] ImageBaseDataset.build_prompt:
# the image, then the question), lmms-eval adds its suffix.
FAMILY = {PAPER: PAPER, VLMEVALKIT: PAPER, LMMS: LMMS}
FAMILIES = (PAPER, LMMS)

# [L] pope.yaml and the per-setting yamls, lmms_eval_specific_kwargs.default.post_prompt.
LMMS_SUFFIX = "\nAnswer the question using a single word or phrase."
# [L] generation_kwargs: max_new_tokens 128, temperature 0 (greedy).
LMMS_MAX_TOKENS = 128

YES, NO = "yes", "no"
# RePOPE's corrected label of a question it leaves out as ambiguous (corrections.json).
AMBIGUOUS = "ambiguous"
# What a record's `parsed` keeps of VLMEvalKit's opt-in judge step (judging.py): the judge's
# reading of an answer the rules read Unknown, why no reading came back, the rules' reading.
JUDGED = "vlmevalkit_judge"
JUDGE_ERROR = "vlmevalkit_judge_error"
RULE = "vlmevalkit_rule"
