"""lmms-eval's per-sample output (`--log_samples`), read the same way across its versions.

Facts from lmms-eval's own code (EvolvingLMMs-Lab/lmms-eval; docs/rescore.md cites commits):
- `EvaluationTracker.save_results_samples` writes one file per task,
  `<output_path>/<model_name_sanitized>/<date_id>_samples_<task>.jsonl`, one JSON object a
  line, beside `<date_id>_results.json` (the aggregate: model name, lmms-eval version, each
  task's config and sample counts).
- A line (`evaluator.evaluate`, `if log_samples:`) holds `doc_id`, `target` (as text),
  `input` (the prompt text, `arguments[0]`), `filtered_resps`, `resps`, `doc_hash`, and the
  task's per-sample metric fields. Images are never in it.
- Until v0.3.5 `doc` is kept minus every key containing "image" (so `image_id` and
  `image_name` are lost too) and `resps` is `[[text]]`, `filtered_resps` `[text]`. From v0.4
  (commit b7b4b1d9) `doc` and `arguments` are dropped, and `resps` is dropped too when it
  equals `filtered_resps`; from v0.7 a one-element list is flattened (`filtered_resps` is the
  text itself). v0.7 adds `token_counts` (`[{"input_tokens", "output_tokens"}]`).
- A request that failed after its retries is logged as "[LMMS_EVAL_REQUEST_FAILED after N
  retries] ..." by the OpenAI-protocol models since v0.6 (commit 99510def), and as the empty
  string by the others and before (`response_text = ""`, `res.append("")` in gpt4v,
  claude, qwen_vl_api, llava_hf ...). An empty answer is therefore recorded as an error,
  never scored. Responses pass `sanitize_list` (`str()`).

Nothing here names a benchmark: a benchmark's reader (a `Reader`) turns a `Logged` into its
own sample.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from visioneval.backends import reasoning
from visioneval.core.foreign import LogFile, RescoreRequest
from visioneval.core.records import Response
from visioneval.excerpts import excerpt
from visioneval.io.lines import BadLines, json_lines

log = logging.getLogger(__name__)

TOOL = "lmms-eval"
SAMPLES_MARK = "_samples_"
FAILED_MARK = "[LMMS_EVAL_REQUEST_FAILED"
RESULTS_LIMIT = 64 << 20  # a results file larger than this is not read (it is metadata)
PROMPT_NOTE = ("only the lmms-eval protocol reads lmms-eval's prompt: the paper's and "
               "VLMEvalKit's protocols need answers to their own prompts")
EMPTY_ERROR = "empty response (lmms-eval logs a failed request as an empty string)"
NO_ANSWER_AFTER_THINKING = ("the response is all reasoning and no answer (its <think> part "
                            "never closed, or nothing followed it): probably cut at "
                            "max_new_tokens")


def task_of(path: Path) -> str | None:
    """The task of a `<date_id>_samples_<task>.jsonl` file name; None for other names."""
    name = path.name
    if not name.endswith(".jsonl") or SAMPLES_MARK not in name:
        return None
    task = name[:-len(".jsonl")].split(SAMPLES_MARK, 1)[1]
    return task or None


def find_logs(paths: Iterable[Path]) -> list[LogFile]:
    """The samples files named or found under the folders named, in name order."""
    found: list[LogFile] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob(f"*{SAMPLES_MARK}*.jsonl") if p.is_file())
            files = [p for p in files if task_of(p)]
            if not files:
                raise ValueError(f"{path}: no lmms-eval samples file (*{SAMPLES_MARK}<task>"
                                 ".jsonl, what --log_samples writes) in this folder")
            found += [LogFile(p.resolve(), task_of(p) or "") for p in files]
        elif path.is_file():
            task = task_of(path)
            if task is None:
                raise ValueError(f"{path}: not an lmms-eval samples file (expected "
                                 f"<date>{SAMPLES_MARK}<task>.jsonl, what --log_samples "
                                 "writes)")
            found.append(LogFile(path.resolve(), task))
        else:
            raise ValueError(f"{path}: no such file or folder")
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Logged:
    """One logged sample, the same whatever lmms-eval version wrote it."""

    file: Path
    line: int
    task: str
    doc_id: int
    target: str | None
    prompt: str | None
    raw: str | None  # `resps` when logged, else `filtered_resps` (dropped when equal)
    filtered: str | None
    raw_logged: bool  # whether `resps` was in the line
    doc: dict[str, Any] | None  # before v0.4 only, without image keys
    fields: dict[str, Any]  # the whole line: the task's metric fields are read from it
    input_tokens: int | None = None
    output_tokens: int | None = None

    def response(self) -> Response:
        """The response as visioneval records one: a failed request is an error."""
        tokens = {"prompt_tokens": self.input_tokens, "completion_tokens": self.output_tokens}
        text = self.raw
        if text is None:
            return Response(error="no response in the log line", **tokens)
        if text.startswith(FAILED_MARK):
            return Response(error=f"lmms-eval: {text}", **tokens)
        if not text.strip():
            return Response(error=EMPTY_ERROR, **tokens)
        # A reasoning model's thinking is set aside before parsing, as in visioneval's own
        # runs (backends/reasoning.py), and kept in the record.
        got = reasoning.split(text)
        if got.unclosed or (got.reasoning is not None and not got.answer):
            return Response(error=NO_ANSWER_AFTER_THINKING, reasoning=got.reasoning, **tokens)
        return Response(text=got.answer, reasoning=got.reasoning, **tokens)

    def metric(self, name: str) -> Any:
        """A metric field as the task's process_results returned it (None when absent)."""
        return self.fields.get(name)

    @property
    def where(self) -> str:
        return f"{self.file.name} line {self.line}"


def first_text(value: Any) -> str | None:
    """The first response of a `resps`/`filtered_resps` value: lists are entered at their
    first element (one per request, then one per repeat); text as it is."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def read(log_file: LogFile, bad: BadLines) -> Iterator[Logged]:
    """Every readable sample of one samples file, streamed."""
    for number, fields in json_lines(log_file.path, bad):
        logged = _logged(log_file, number, fields)
        if isinstance(logged, str):
            bad.report(log_file.path, number, logged)
        else:
            yield logged


def _logged(log_file: LogFile, number: int, fields: dict[str, Any]) -> Logged | str:
    """The sample a line holds, or why it holds none."""
    doc_id = fields.get("doc_id")
    if isinstance(doc_id, str) and doc_id.strip().isdigit():
        doc_id = int(doc_id)
    if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
        return "no doc_id (a whole number) in the line"
    if "resps" not in fields and "filtered_resps" not in fields:
        return "neither resps nor filtered_resps in the line"
    filtered = first_text(fields.get("filtered_resps"))
    raw_logged = "resps" in fields
    raw = first_text(fields["resps"]) if raw_logged else filtered
    arguments = fields.get("arguments")
    prompt = fields.get("input")
    if not isinstance(prompt, str) and isinstance(arguments, list) and arguments:
        prompt = arguments[0]
    target = fields.get("target")
    doc = fields.get("doc")
    tokens = _tokens(fields.get("token_counts"))
    return Logged(log_file.path, number, log_file.task, doc_id,
                  None if target is None else str(target),
                  prompt if isinstance(prompt, str) else None, raw, filtered, raw_logged,
                  doc if isinstance(doc, dict) else None, fields, *tokens)


def _tokens(value: Any) -> tuple[int | None, int | None]:
    """(input, output) tokens of the first request's `token_counts`, when logged."""
    first = value[0] if isinstance(value, list) and value else None
    if not isinstance(first, dict):
        return None, None

    def count(key: str) -> int | None:
        n = first.get(key)
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None

    return count("input_tokens"), count("output_tokens")


# -- the aggregate results file beside the samples -----------------------------------------

@dataclass(frozen=True)
class RunFacts:
    """What `<date_id>_results.json` says about the run a samples file came from (None:
    not recorded, or no results file). Only these facts are kept: the file's config may
    hold model arguments that are not ours to copy."""

    results_file: Path | None = None
    model_name: str | None = None
    version: str | None = None
    git_hash: str | None = None
    date: str | None = None
    task_config: dict[str, Any] | None = None
    n_samples: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"results_file": str(self.results_file) if self.results_file else None,
                "model_name": self.model_name, "lmms_eval_version": self.version,
                "git_hash": self.git_hash, "date": self.date, "n_samples": self.n_samples}

    def generation(self) -> dict[str, Any]:
        """The task's generation_kwargs as the run used them ({} when not recorded)."""
        kwargs = (self.task_config or {}).get("generation_kwargs")
        return kwargs if isinstance(kwargs, dict) else {}

    def data_files(self) -> Any:
        """The task's dataset_kwargs.data_files (a path or hf:// URL per split), or None."""
        kwargs = (self.task_config or {}).get("dataset_kwargs")
        return kwargs.get("data_files") if isinstance(kwargs, dict) else None

    @property
    def limited_to(self) -> int | None:
        """The sample count when the run evaluated fewer docs than the task has (--limit)."""
        counts = self.n_samples or {}
        original, effective = counts.get("original"), counts.get("effective")
        if isinstance(original, int) and isinstance(effective, int) and effective < original:
            return effective
        return None


def run_facts(log_file: LogFile) -> RunFacts:
    """The facts of the results file written with a samples file (same date_id, same
    folder); an absent or unreadable one gives no facts, with a warning for the latter."""
    date_id = log_file.path.name.split(SAMPLES_MARK, 1)[0]
    path = log_file.path.with_name(f"{date_id}_results.json")
    if not path.is_file():
        return RunFacts()
    try:
        if path.stat().st_size > RESULTS_LIMIT:
            raise ValueError(f"larger than {RESULTS_LIMIT >> 20} MB")
        data = orjson.loads(path.read_bytes())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:  # orjson's error is a ValueError
        log.warning("%s: not read (%s); the run's facts come from the samples alone", path,
                    str(exc).splitlines()[0])
        return RunFacts()

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) and value else None

    configs, counts = data.get("configs"), data.get("n-samples")
    task = log_file.task
    return RunFacts(path, text(data.get("model_name")), text(data.get("lmms_eval_version")),
                    text(data.get("git_hash")), text(str(data["date"])) if "date" in data
                    else None,
                    configs.get(task) if isinstance(configs, dict) else None,
                    counts.get(task) if isinstance(counts, dict) else None)


def model_name(logs: Sequence[LogFile], facts: dict[Path, RunFacts],
               given: str | None) -> str:
    """The model the logs are of: as given, else the results files' `model_name`, else the
    folder lmms-eval wrote them into (`<output_path>/<model_name_sanitized>/`). Logs of two
    models are refused: a run directory holds one model's answers."""
    if given:
        return given
    names = {log_file.path: facts[log_file.path].model_name or log_file.path.parent.name
             for log_file in logs}
    distinct = sorted(set(names.values()))
    if len(distinct) > 1:
        raise ValueError("these logs are of different models ("
                         + "; ".join(f"{p.name}: {n}" for p, n in names.items())
                         + "); re-score one model at a time, or name it with --model")
    return distinct[0] if distinct else "unknown"


def common(values: Iterable[Any]) -> Any:
    """The value every log agrees on, else None."""
    distinct = {orjson.dumps(v, option=orjson.OPT_SORT_KEYS): v for v in values}
    return next(iter(distinct.values())) if len(distinct) == 1 else None


def tool_run(facts: Iterable[RunFacts]) -> dict[str, Any]:
    """What run.json's provenance keeps of the tool's run(s): version, commit, date, model
    name and each results file read."""
    facts = list(facts)
    out: dict[str, Any] = {}
    for key in ("lmms_eval_version", "git_hash", "date", "model_name"):
        values = sorted({str(f.as_dict()[key]) for f in facts if f.as_dict()[key]})
        if values:
            out[key] = values[0] if len(values) == 1 else values
    out["results_files"] = sorted({str(f.results_file) for f in facts if f.results_file})
    return out


def score_field(value: Any) -> float | None:
    """A per-sample score as process_results logs it (`{"score": x}` or a bare x); None
    when the field is absent or not a number."""
    if isinstance(value, dict):
        value = value.get("score")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def generation(kwargs: Any, task_default: dict[str, Any]) -> dict[str, Any]:
    """run.json's generation settings: the run's own generation_kwargs when its results file
    kept them, else the task yaml's (`task_default`); a setting lmms-eval left to the model
    is None."""
    if not isinstance(kwargs, dict) or not kwargs:
        return dict(task_default)
    return {"temperature": kwargs.get("temperature"),
            "max_tokens": kwargs.get("max_new_tokens"), "seed": None}


# -- what every benchmark's reader shares --------------------------------------------------

class Checks:
    """What every reader counts besides the records: the logged scores compared with the
    same rule here and how many differ, the prompts that are not the task's, and the
    samples whose raw response differs from the one lmms-eval scored (`filtered_resps`)."""

    def __init__(self) -> None:
        self.compared = 0
        self.differ = 0
        self.other_prompts = 0
        self.raw_differs = 0

    def where(self, logged: Logged) -> dict[str, Any]:
        """Where a sample was logged, as its record's metadata keeps it."""
        return {"task": logged.task, "doc_id": logged.doc_id, "file": logged.file.name,
                "line": logged.line}

    def keep_filtered(self, logged: Logged, kept: dict[str, Any]) -> None:
        """The response lmms-eval scored, kept (an excerpt) where it is not the raw one."""
        if logged.filtered is not None and logged.filtered != logged.raw:
            self.raw_differs += 1
            kept["filtered_resps"] = excerpt(logged.filtered)

    def agreement(self, score: str, rule: str) -> str:
        """The printout's line on how often lmms-eval's logged `score` agrees with `rule`
        applied here."""
        return (f"lmms-eval's own {score} agrees with {rule} on "
                f"{self.compared - self.differ} of {self.compared} answers")

    @staticmethod
    def counted(*counts: tuple[int, str]) -> list[str]:
        """A printout line per count that is not zero: the count, then what it counts."""
        return [f"{n} {what}" for n, what in counts if n]


class Reader:
    """The start of a benchmark's reader of lmms-eval's samples files: the tool, and the
    lmms-eval tasks it reads (the keys of `task_names`); a task of another benchmark of the
    same name is unknown unless the reader says why it is not read."""

    tool = TOOL
    task_names: Mapping[str, object] = {}

    def tasks(self) -> Sequence[str]:
        return tuple(self.task_names)

    def other_benchmark(self, task: str) -> str | None:
        return None


@dataclass(frozen=True)
class Provenance:
    """What run.json records of the logs' runs: each samples file's results facts, the
    generation settings, the model and the tool's run."""

    facts: dict[Path, RunFacts]
    generation: dict[str, Any]
    model: str
    tool_run: dict[str, Any]


def provenance(logs: Sequence[LogFile], request: RescoreRequest,
               task_default: dict[str, Any]) -> Provenance:
    """The logs' provenance; `task_default`: the task yaml's generation settings, used when
    no results file kept the run's own."""
    facts = {f.path: run_facts(f) for f in logs}
    return Provenance(facts, generation(common(f.generation() for f in facts.values()),
                                        task_default),
                      model_name(logs, facts, request.model), tool_run(facts.values()))
