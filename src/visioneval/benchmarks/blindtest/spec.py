"""BlindTest's fixed facts (Rahmanzadehgervi, Bolton, Taesiri and Nguyen, "Vision language
models are blind", ACCV 2024, arXiv 2407.06581).

Sources (docs/blindtest.md cites them line by line):
- [P] github anguyen8/vision-llms-are-blind at dd2a28d: `src/prompts.md` (two prompts per
  task), README.md (API default settings, temperature 1; the per-task tables are images and
  commented-out older versions). The answer-parsing code is not in the repository.
- [L] EvolvingLMMs-Lab/lmms-eval at 75571cf: `lmms_eval/tasks/vlmsareblind/` (utils.py,
  vlmsareblind.yaml, README.md with the paper's Table 1).
- [V] open-compass/VLMEvalKit at e8e78f0: `vlmeval/dataset/image_mcq.py`, class `VLMBlind`
  (lines 2529-2615) and `ImageMCQDataset.build_prompt` (lines 212-246).
- [H] the Hub copy XAI/vlmsareblind: one split `valid`, `data/valid-*.parquet`, columns task,
  image, prompt, groundtruth, metadata (all text but the image; metadata a JSON object).
"""

from __future__ import annotations

HF_REPO = "XAI/vlmsareblind"
SPLIT = "valid"
# No source names a revision: lmms-eval's yaml reads the newest (docs/decisions.md).
REVISION: str | None = None

COLUMNS = ("task", "image", "prompt", "groundtruth")
OPTIONAL_COLUMNS = ("metadata",)

# The Hub's task labels ([L] utils.py lines 4-14 lowercases them; [V] compares them as is).
CIRCLED = "Circled Letter"
GRID_BLANK = "Counting Grid - Blank Grids"
GRID_WORD = "Counting Grid - Word Grids"
LINES = "Line Plot Intersections"
NESTED = "Nested Squares"
OLYMPIC_CIRCLES = "Olympic Counting - Circles"
OLYMPIC_PENTAGONS = "Olympic Counting - Pentagons"
SUBWAY = "Subway Connections"
TOUCHING = "Touching Circles"
TASKS = (LINES, TOUCHING, CIRCLED, OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS, NESTED, GRID_BLANK,
         GRID_WORD, SUBWAY)
# Counting tasks whose answer is one whole number.
NUMBER_TASKS = (LINES, NESTED, OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS, SUBWAY)
GRID_TASKS = (GRID_BLANK, GRID_WORD)

# The paper's Table 1 columns: the two grid subtasks are one task ([L] README.md line 28,
# utils.py TASK_MAP lines 16-19).
GRID = "Counting Grid"
PAPER_TASKS = (LINES, TOUCHING, CIRCLED, OLYMPIC_CIRCLES, OLYMPIC_PENTAGONS, NESTED, GRID,
               SUBWAY)


def paper_task(task: str) -> str:
    """The Table 1 column a Hub task belongs to."""
    return GRID if task in GRID_TASKS else task


PAPER, LMMS, VLMEVALKIT = "paper", "lmms-eval", "vlmevalkit"
PROTOCOLS = (PAPER, LMMS, VLMEVALKIT)
# Each protocol sends its own text: the paper the prompt as it is, lmms-eval the prompt and
# its suffix, VLMEvalKit "Question: <prompt>\n".
FAMILIES = PROTOCOLS

# [L] vlmsareblind.yaml lines 26-29 (post_prompt) and 9-14 (max_new_tokens 32, greedy).
LMMS_SUFFIX = "\nAnswer only in the required format."
LMMS_MAX_TOKENS = 32
# [V] ImageMCQDataset.build_prompt, line 235: no hint and no options in VLMBlind's rows.
VLMEVALKIT_PREFIX = "Question: "

# Chance where the answer space is closed: touching circles is yes or no.
CHANCE = {TOUCHING: 0.5}
