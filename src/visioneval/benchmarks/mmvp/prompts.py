"""The three prompts, each as its reference code builds it (the image goes first, then the
text, as one user message).

- paper: `Question + " " + Options` ([P] scripts/evaluate_mllm.py line 59), the options
  string verbatim (a stored leading or trailing space stays). The original wrapped it in
  LLaVA's image token and `llava_v1` conversation template (lines 62-70); a chat server
  applies its own template.
- lmms-eval: `{Question}\\nA. {opt1}\\nB. {opt2}` and the post prompt "\\nAnswer with the
  option's letter from the given choices directly." ([L] utils.py `mmvp_doc_to_text`, lines
  93-123; _default_template_yaml line 23; pre_prompt "").
- vlmevalkit: `ImageMCQDataset.build_prompt` ([V] image_mcq.py lines 212-247): "Question:
  {q}\\nOptions:\\nA. {A}\\nB. {B}\\nPlease select the correct answer from the options
  above. \\n" (no hint: MMVP has none). Many of VLMEvalKit's model wrappers build their own
  MCQ prompt instead; this is the generic one its API models get.
"""

from __future__ import annotations

from visioneval.benchmarks.mmvp.questions import Question

LMMS_POST_PROMPT = "\nAnswer with the option's letter from the given choices directly."
VLMEVALKIT_ASK = "Please select the correct answer from the options above. \n"


def paper(q: Question) -> str:
    return q.question + " " + q.options


def lmms_eval(q: Question) -> str:
    listed = "\n".join(f"{chr(65 + i)}. {text}" for i, text in enumerate(q.choices))
    return f"{q.question}\n{listed}{LMMS_POST_PROMPT}"


def vlmevalkit(q: Question) -> str:
    listed = "".join(f"{chr(65 + i)}. {text}\n" for i, text in enumerate(q.choices))
    return f"Question: {q.question}\nOptions:\n{listed}{VLMEVALKIT_ASK}"


PROMPTS = {"paper": paper, "lmms-eval": lmms_eval, "vlmevalkit": vlmevalkit}


def prompt(protocol: str, q: Question) -> str:
    return PROMPTS[protocol](q)
