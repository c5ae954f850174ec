"""IllusionBench's fixed facts (Hemmat et al., NeurIPS 2024 D&B, arXiv 2411.06287).

Sources (see docs/illusionbench.md):
- [R] github arshiahemmat/IllusionBench, `Zero-shot_experiments/Evaluator.py` (class lists,
  scene lists, prompts, bucket scoring) and `Data_generator/generator.py` (file names).
- [L5917] EvolvingLMMs-Lab/lmms-eval commit 5917cab6,
  `lmms_eval/tasks/illusionbench/arshia_utils.py` (the strict variant: candidate lists).
- [HF] huggingface.co/datasets/arshiahemmat/IllusionBench (splits, columns).
"""

from __future__ import annotations

HF_REPO = "arshiahemmat/IllusionBench"
SUBSETS = ("ICON", "LOGO", "IN")
TASKS = ("shape", "scene")
DIFFICULTIES = ("Easy", "Hard")
COLUMNS = ("image_name", "image")

PROTOCOLS = ("original", "lmms-strict", "lmms-recall")
ORIGINAL_FIXED = "original-fixed"  # the original rule with its quirks corrected
# Which prompt family (= which request) each protocol scores.
FAMILY = {"original": "original", ORIGINAL_FIXED: "original", "lmms-recall": "original",
          "lmms-strict": "lmms"}


def split_name(subset: str) -> str:
    """The HF split (and parquet file prefix) of a subset: ICON -> Illusion_ICON."""
    return f"Illusion_{subset}"


# Shape classes as the original prompts offer them, in their order ([R] Evaluator.py,
# `Icon_dataset`, `logo_classes`, `sin_classes`).
ORIGINAL_SHAPES = {
    "ICON": ("Animal", "Face_Emoji", "Music", "Sport", "Stationery", "Vehicle"),
    "LOGO": ("Adidas", "Amazon", "Apple", "Audi", "BMW", "Mercedes Benz", "Facebook", "Google",
             "Instagram", "Mcdonalds", "Nasa", "Nike", "Olympics", "Playstation", "Puma",
             "Reebok", "Spotify", "Starbucks", "Tesla", "Telegram", "Ubuntu"),
    "IN": ("Airplane", "Bicycle", "Bird", "Bottle", "Car", "Cat", "Dog", "Dolphin", "Fork",
           "Guitar", "Mug", "Panda", "Paper_clip", "Sailboat", "Scooter", "Teapot"),
}

# Scenes, simple then complex ([R] Evaluator.py `simple_prompts`, `complex_prompts`; the same
# spellings are the scene tokens of the file names, Data_generator/generator.py).
SIMPLE_SCENES = ("Ocean", "Origami", "Forest", "Cloud", "Sand_dune")
COMPLEX_SCENES = ("Medieval_Village", "City", "Underwater_ruins", "Museum", "Bazaar_market",
                  "Time_square")
SCENES = SIMPLE_SCENES + COMPLEX_SCENES

# The lmms-eval strict variant's candidates, in its order ([L5917] SHAPE_CANDIDATES_*,
# SCENE_CANDIDATES). They are the file names' spellings (`stationary`, `benz`).
LMMS_SHAPES = {
    "ICON": ("animal", "vehicle", "stationary", "sport", "music", "face_emoji"),
    "LOGO": ("tesla", "starbucks", "mcdonalds", "adidas", "reebok", "bmw", "ubuntu", "benz",
             "telegram", "nike", "apple", "puma", "facebook", "playstation", "instagram",
             "audi", "olympics", "google", "spotify", "amazon", "nasa"),
    "IN": ("guitar", "teapot", "cat", "paper_clip", "bird", "dolphin", "mug", "bicycle",
           "bottle", "panda", "dog", "sailboat", "car", "fork", "scooter", "airplane"),
}
LMMS_SCENES = ("Underwater_ruins", "Time_square", "Medieval_Village", "City", "Museum", "Cloud",
               "Ocean", "Sand_dune", "Bazaar_market", "Forest", "Origami")

# Shape labels as the file names spell them: `{shape.lower()}-...` (generator.py). ICON says
# `stationary` (generator `categories`, [L5917]); LOGO's `benz` is [L5917]'s spelling and
# unverified against the HF rows. Used by the synthetic fixture set only: real labels are
# whatever the file names say.
FILE_SHAPES = {subset: tuple(sorted(names)) for subset, names in LMMS_SHAPES.items()}

# Generation strengths per difficulty (generator.py `values`).
STRENGTHS = {"Easy": (1.25, 1.4), "Hard": (1.05, 0.85)}

# Corrections of the original rule's spelling quirks (`--fix-quirks`; Evaluator.py's prompts
# against generator.py's and lmms-eval's label spellings):
# the prompt offers `Stationery` for the label `stationary`; it offers `Mercedes Benz` and
# asks for a single word, so "mercedes" alone names the class; "Time_square" is the place
# called Times Square in the paper's overview figure.
QUIRK_ALIASES = {
    "stationary": ("stationery",),
    "benz": ("mercedes",),
    "time_square": ("times square",),
}
