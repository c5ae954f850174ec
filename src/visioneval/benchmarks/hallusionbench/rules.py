"""How each protocol reads one answer, as pure functions of (answer text, labels).

The paper grades every answer with GPT-4 against the detailed answer (`gt_answer_details`):
the grader's reply is a code, 0 incorrect, 1 correct, 2 unclear ([P] utils.py:58-64), and
`assign_correctness` (utils.py:404-411) makes 1 correct, and 2 correct too for a VS question
asked without its figure. lmms-eval runs the same grader and the same `assign_correctness`
([L] utils.py:72-78, 161-168). Without a judge model (the default), visioneval stands in for
the grader with VLMEvalKit's Yes/No reading against `gt_answer`: Yes or No that matches the
label is code 1, the other is code 0, and an answer it cannot call yes or no is code 2
(unclear). That is visioneval's rule, not the paper's: the grader also accepts a free answer
that agrees with the detailed answer ("Syria" to "which country...?"), and may call an
answer that says "yes" while contradicting the details incorrect.

VLMEvalKit ([V] image_yorn.py:53-91): `YOrN_Extraction` (yorn.py:254-261) reads Yes, No or
Unknown; the score is that word equal to the Yes/No answer; an Unknown goes to its judge
model when one works (`match_prompt`), else stays wrong.
"""

from __future__ import annotations

from visioneval.harness import vlmevalkit

YesNo = vlmevalkit.YesNo
INCORRECT, CORRECT, UNCLEAR = 0, 1, 2

# -- VLMEvalKit's Yes/No reading: `YOrN_Extraction` after `process_punctuation`, shared with
# every benchmark VLMEvalKit scores by Yes/No (`visioneval.harness.vlmevalkit`).
yes_no = vlmevalkit.yes_no
punctuation = vlmevalkit.process_punctuation


def label_word(gt_answer: str) -> YesNo:
    """gt_answer as VLMEvalKit's `answer` column holds it ("1" -> "Yes")."""
    return "Yes" if gt_answer == "1" else "No"


def vlmevalkit_correct(extracted: str, gt_answer: str) -> bool:
    """[V] image_yorn.py:91: the extracted word equals the answer, exactly."""
    return extracted == label_word(gt_answer)


# -- the paper's grader ---------------------------------------------------------------------
def rule_code(extracted: str, gt_answer: str) -> int:
    """visioneval's stand-in for the grader's code: the Yes/No reading against gt_answer."""
    if extracted not in ("Yes", "No"):
        return UNCLEAR
    return CORRECT if extracted == label_word(gt_answer) else INCORRECT


def judge_prompt(question: str, details: str, prediction: str) -> str:
    """The grader's prompt, character for character ([P] utils.py:33-40; [L] utils.py:36-43):
    curly quotes around correct and incorrect, straight ones around unclear, no space after
    "Question:" and "Prediction answer:"."""
    return ("Imagine you are an intelligent teacher. Thoroughly read the question, reference "
            "answer and the prediction answer to ensure a clear understanding of the "
            "information provided. Assess the correctness of the predictions. If the "
            "prediction answer does not conflict with the reference answer, please generate "
            "\u201ccorrect\u201d. If the prediction answer conflict with the reference answer, "
            "please generate \u201cincorrect\u201d. If the prediction answer is unclear about "
            "the answer, please generate \"unclear\". \n\n Question:"
            f"{question}\nReference answer: {details}\nPrediction answer:{prediction}"
            "\nOutput:")


def judge_code(reply: str) -> int:
    """The grader's reply as a code ([P] utils.py:58-64): "incorrect" anywhere is 0, else
    "correct" anywhere is 1, else 2."""
    low = reply.lower()
    if "incorrect" in low:
        return INCORRECT
    return CORRECT if "correct" in low else UNCLEAR


def paper_correct(code: int, no_figure: bool) -> bool:
    """`assign_correctness`: code 1 is correct; for a VS question asked without its figure,
    code 2 (the model does not know) is correct too."""
    return code == CORRECT or (no_figure and code == UNCLEAR)


# -- VLMEvalKit's judge step ----------------------------------------------------------------
MATCH_TRIES = 5  # [V] yorn.py:266: up to 5 replies, at temperature 0.5 * i


def match_prompt(question: str, prediction: str) -> str:
    """`YOrN_match_prompt` ([V] yorn.py:235-251), which adds a "?" after the question (the
    questions end in one already)."""
    return ("You are an AI assistant who will help me to match an answer with two options of "
            "a question. The options are only Yes / No. You are provided with a question and "
            "an answer, and you need to find which option (Yes / No) is most similar to the "
            "answer. If the meaning of all options are significantly different from the "
            "answer, output Unknown. Your should output a single word among the following 3 "
            "choices: Yes, No, Unknown.\nExample 1: \nQuestion: Is the word in this image "
            "'Hello'?\nAnswer: The word in this image is 'Hello'.\nYour output: Yes\n"
            "Example 2: \nQuestion: Is the word in this image 'Hello'?\nAnswer: The word in "
            "this image is not 'Hello'.\nYour output: No\nExample 3: \n"
            f"Question: {question}?\nAnswer: {prediction}\nYour output: ")
