"""The three prompts, each as its reference code builds it. Every non-null image of the row
goes with it, as the stored bytes, in column order (image_1 ... image_4).

- paper: the dataset's `prompt` verbatim, with the disclaimer paragraph before it for
  Forensic_Detection, Jigsaw and Art_Style ([P] eval/test_benchmark.py `load_prompt`, lines
  124-136; the text at line 10, the tasks at line 175). The text goes first, then the images
  ([P] eval/query_model.py lines 27-30).
- lmms-eval: "Note: You only need to respond with A, B[, C, D] without providing any
  additional information.\\n" then `prompt` ([L] _default_template_yaml pre_prompt;
  utils.py `blink_doc_to_text`, lines 31-38); the images first (`blink_doc_to_messages`,
  lines 86-97).
- vlmevalkit: `ImageMCQDataset.build_prompt` ([V] image_mcq.py lines 212-247): "Question:
  {question}\\nOptions:\\nA. ...\\nPlease select the correct answer from the options above.
  \\n", images first. VLMEvalKit's BLINK.tsv is not published beside its md5 (image_mcq.py
  line 188); its `question` is taken to be the dataset's `question` field with the options
  from `choices` (the `prompt` field already lists them).
"""

from __future__ import annotations

from visioneval.benchmarks.blink.questions import Question
from visioneval.benchmarks.blink.spec import DISCLAIMER, DISCLAIMER_TASKS

LMMS_PRE_PROMPT = ("Note: You only need to respond with {} without providing any additional "
                   "information.\n")
VLMEVALKIT_ASK = "Please select the correct answer from the options above. \n"


def paper(q: Question) -> str:
    return (DISCLAIMER if q.task in DISCLAIMER_TASKS else "") + q.prompt


def lmms_eval(q: Question) -> str:
    return LMMS_PRE_PROMPT.format(", ".join(q.letters)) + q.prompt


def vlmevalkit(q: Question) -> str:
    listed = "".join(f"{letter}. {text}\n" for letter, text in zip(q.letters, q.choices,
                                                                   strict=True))
    return f"Question: {q.question}\nOptions:\n{listed}{VLMEVALKIT_ASK}"


PROMPTS = {"paper": paper, "lmms-eval": lmms_eval, "vlmevalkit": vlmevalkit}
TEXT_FIRST = ("paper",)


def prompt(protocol: str, q: Question) -> str:
    return PROMPTS[protocol](q)
