"""VLMEvalKit's prediction files, read one row at a time whatever format they were saved in.

Facts from VLMEvalKit's own code (open-compass/VLMEvalKit at e8e78f05; docs/rescore.md
cites the lines):
- `infer_data_job` (vlmeval/inference.py) writes one file per model and dataset,
  `get_pred_file_path` (vlmeval/smp/file.py): `<work_dir>/<model>/<eval_id>/<model>_<dataset>
  .<fmt>`, with a link of the same name in `<work_dir>/<model>/` (run.py). `<fmt>` is
  `xlsx` unless the environment variable PRED_FORMAT says `tsv` or `json`
  (`get_pred_file_format`).
- The file is the dataset's TSV (index, question, answer, category, ...) with the column
  `prediction` added (each answer passed through `str()`) and the `image` column dropped;
  with SPLIT_THINK set, the reasoning is split out into a `thinking` column.
- `dump` writes tsv with pandas' `to_csv(sep="\\t", quoting=QUOTE_ALL)` (a header row, every
  cell quoted, an empty cell for a missing value), json as a list of one object per row
  (`to_dict("records")`, so a missing value is NaN), xlsx through xlsxwriter.
- A request that failed is the answer "Failed to obtain answer via API." (API models,
  vlmeval/api/base.py) or "Failed to obtain answer: <error>" (local models with SKIP_ERR);
  VLMEvalKit itself tests `FAIL_MSG in prediction` to retry them (inference.py). Here such
  an answer is an error, never a wrong answer.
- The judge's files beside it (`<model>_<dataset>_<judge>.xlsx`, `_auxmatch`, `_score.csv`,
  `_acc.csv`, `.pkl` checkpoints) are not predictions and are not read.

Nothing here names a benchmark: a benchmark's reader turns a `Row` into its own sample.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from visioneval.backends import reasoning
from visioneval.core.foreign import LogFile, RescoreRequest
from visioneval.core.records import Response
from visioneval.excerpts import excerpt
from visioneval.io.lines import BadLines

TOOL = "vlmevalkit"
FORMATS = ("xlsx", "tsv", "json")
FAIL_MARK = "Failed to obtain answer"  # both of VLMEvalKit's failure answers start so
CELL_LIMIT = 131072  # characters a cell may hold (the csv module's own default limit)
JSON_OBJECT_LIMIT = 16 << 20  # bytes one row of a json file may take
CHUNK = 1 << 20
NO_OPENPYXL = ("install openpyxl or save VLMEvalKit's predictions as tsv (its format "
               "setting: PRED_FORMAT=tsv)")
UNKNOWN_GENERATION = {"temperature": None, "max_tokens": None, "seed": None}


def task_of(path: Path, tasks: Collection[str]) -> str | None:
    """The dataset of a `<model>_<dataset>.<fmt>` file name, among `tasks` (the longest
    that fits); None for any other name (a judge's file, another dataset)."""
    ext = path.suffix.lstrip(".").lower()
    if ext not in FORMATS:
        return None
    stem = path.stem
    for task in sorted(tasks, key=len, reverse=True):
        if stem.endswith(f"_{task}") and len(stem) > len(task) + 1:
            return task
    return None


def model_of(log_file: LogFile) -> str:
    """The model of a `<model>_<dataset>.<fmt>` file: its name before `_<dataset>`."""
    return log_file.path.stem[:-len(log_file.task) - 1]


def find_logs(paths: Iterable[Path], tasks: Collection[str]) -> list[LogFile]:
    """The prediction files named, or found under the folders named, of the datasets
    `tasks`; a file and VLMEvalKit's link to it are one file."""
    found: list[LogFile] = []
    listed = ", ".join(sorted(tasks))
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and task_of(p, tasks))
            if not files:
                raise ValueError(f"{path}: no VLMEvalKit prediction file (<model>_<dataset>"
                                 f".xlsx, .tsv or .json with dataset one of {listed}) in "
                                 "this folder")
            found += [LogFile(p.resolve(), task_of(p, tasks) or "") for p in files]
        elif path.is_file():
            task = task_of(path, tasks)
            if task is None:
                raise ValueError(f"{path}: not a VLMEvalKit prediction file of a dataset "
                                 f"visioneval re-scores (expected <model>_<dataset>.xlsx, "
                                 f".tsv or .json, dataset one of {listed})")
            found.append(LogFile(path.resolve(), task))
        else:
            raise ValueError(f"{path}: no such file or folder")
    xlsx = next((f.path for f in found if f.path.suffix.lower() == ".xlsx"), None)
    if xlsx is not None and importlib.util.find_spec("openpyxl") is None:
        raise ValueError(f"{xlsx}: reading xlsx needs openpyxl: {NO_OPENPYXL}")
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Row:
    """One row of a prediction file: its cells as text ("" for an empty one)."""

    file: Path
    number: int  # the line of a tsv, the sheet row of an xlsx, the object of a json (1-based)
    fields: dict[str, str]

    @property
    def prediction(self) -> str:
        return self.fields.get("prediction", "")

    def get(self, column: str) -> str:
        return self.fields.get(column, "")

    def response(self) -> Response:
        """The answer as visioneval records one: VLMEvalKit's failure answer and an empty
        one are errors; a reasoning model's thinking is set aside as in visioneval's runs."""
        text = self.prediction
        if FAIL_MARK in text:
            return Response(error=f"VLMEvalKit: {excerpt(text)}")
        if not text.strip():
            return Response(error="empty prediction")
        thinking = self.get("thinking").strip() or None
        got = reasoning.split(text)
        if got.unclosed or (got.reasoning is not None and not got.answer):
            return Response(error="the prediction is all reasoning and no answer",
                            reasoning=got.reasoning)
        return Response(text=got.answer, reasoning=got.reasoning or thinking)

    @property
    def where(self) -> str:
        return f"{self.file.name} row {self.number}"


def cell(value: Any) -> str:
    """A cell as text: a missing value (None, NaN) is "", a whole float its integer."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else str(value)


def read(log_file: LogFile, bad: BadLines) -> Iterator[Row]:
    """Every readable row of one prediction file, streamed; a row that cannot be read is
    reported to `bad` (file and row) and skipped."""
    path = log_file.path
    tally = bad.tally(path)
    digest = hashlib.sha256()
    with open(path, "rb") as raw:
        for block in iter(lambda: raw.read(CHUNK), b""):
            digest.update(block)
    tally.sha256 = digest.hexdigest()
    ext = path.suffix.lstrip(".").lower()
    rows = _tsv(path, bad) if ext == "tsv" else _json(path, bad) if ext == "json" \
        else _xlsx(path, bad)
    for number, fields in rows:
        tally.lines += 1
        why = _problem(fields)
        if why:
            bad.report(path, number, why)
            continue
        yield Row(path, number, fields)


def _problem(fields: Mapping[str, str]) -> str | None:
    """Why a row holds no answer to read, or None."""
    if "prediction" not in fields:
        return "no prediction column (is this VLMEvalKit's prediction file?)"
    if "index" not in fields or not fields["index"].strip():
        return "no index"
    big = next((k for k, v in fields.items() if len(v) > CELL_LIMIT), None)
    if big is not None:
        return f"column {big!r} holds more than {CELL_LIMIT} characters"
    return None


def _tsv(path: Path, bad: BadLines) -> Iterator[tuple[int, dict[str, str]]]:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header: list[str] | None = None
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:  # a cell over the limit, a torn quote
                bad.report(path, reader.line_num, f"not a tsv row: {exc}")
                continue
            if header is None:
                header = cells
                continue
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                bad.report(path, reader.line_num, f"{len(cells)} cells where the header has "
                           f"{len(header)}")
                continue
            yield reader.line_num, dict(zip(header, cells, strict=True))


def _json(path: Path, bad: BadLines) -> Iterator[tuple[int, dict[str, str]]]:
    """The objects of a json list, decoded one at a time (the file is never whole in
    memory); a syntax error ends the file's reading with one line."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, value in _json_items(fh, path, bad):
            if not isinstance(value, dict):
                bad.report(path, number, "not a JSON object")
                continue
            yield number, {str(k): cell(v) for k, v in value.items()}


def _json_items(fh: IO[str], path: Path, bad: BadLines) -> Iterator[tuple[int, Any]]:
    decoder = json.JSONDecoder()
    buffer, pos, number, started, ended = "", 0, 0, False, False

    def more() -> bool:
        nonlocal buffer, pos, ended
        chunk = fh.read(CHUNK)
        buffer, pos = buffer[pos:] + chunk, 0
        ended = not chunk
        return bool(chunk)

    more()
    while True:
        while pos < len(buffer) and (buffer[pos].isspace() or (started and buffer[pos] == ",")):
            pos += 1
        if pos >= len(buffer):
            if ended or not more():
                if started:
                    bad.report(path, number + 1, "the file ends before the list closes")
                return
            continue
        if not started:
            if buffer[pos] != "[":
                bad.report(path, 1, "not a JSON list of rows")
                return
            started, pos = True, pos + 1
            continue
        if buffer[pos] == "]":
            return
        try:
            value, end = decoder.raw_decode(buffer, pos)
        except json.JSONDecodeError as exc:
            if not ended and len(buffer) - pos < JSON_OBJECT_LIMIT and more():
                continue
            bad.report(path, number + 1, f"not JSON ({exc.msg}); the rest of the file is "
                       "not read")
            return
        number += 1
        pos = end
        yield number, value


def _xlsx(path: Path, bad: BadLines) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        # here, not at the top: openpyxl is optional (the extra `vlmevalkit`)
        import openpyxl  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise ValueError(f"{path}: an xlsx file needs openpyxl: {NO_OPENPYXL}") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds on a file that is not xlsx
        bad.report(path, 1, f"not a readable xlsx file ({str(exc).splitlines()[0]})")
        return
    try:
        sheet = book.worksheets[0]
        header: list[str] | None = None
        for number, values in enumerate(sheet.iter_rows(values_only=True), 1):
            cells = [cell(v) for v in values]
            if header is None:
                header = cells
                continue
            if not any(c.strip() for c in cells):
                continue
            cells = (cells + [""] * len(header))[:len(header)]
            yield number, dict(zip(header, cells, strict=True))
    finally:
        book.close()


# -- what every benchmark's reader shares --------------------------------------------------

class Reader:
    """The start of a benchmark's reader of VLMEvalKit's prediction files: the tool and the
    VLMEvalKit datasets it reads (the keys of `datasets`)."""

    tool = TOOL
    datasets: Mapping[str, object] = {}

    def tasks(self) -> Sequence[str]:
        return tuple(self.datasets)

    def other_benchmark(self, task: str) -> str | None:
        return None


@dataclass(frozen=True)
class Provenance:
    """What run.json records of the files' run: the model and the tool's run."""

    model: str
    tool_run: dict[str, Any]
    generation: dict[str, Any]


def provenance(logs: Sequence[LogFile], request: RescoreRequest) -> Provenance:
    """The model (as given, else the file names'; files of two models are refused) and
    what the files say of VLMEvalKit's run (their format and folder)."""
    names = {f.path: model_of(f) for f in logs}
    distinct = sorted(set(names.values()))
    if not request.model and len(distinct) > 1:
        raise ValueError("these files are of different models ("
                         + "; ".join(f"{p.name}: {n}" for p, n in names.items())
                         + "); re-score one model at a time, or name it with --model")
    model = request.model or (distinct[0] if distinct else "unknown")
    tool_run = {"model_name": distinct[0] if len(distinct) == 1 else distinct,
                "formats": sorted({f.path.suffix.lstrip(".") for f in logs}),
                "folders": sorted({f.path.parent.name for f in logs})}
    return Provenance(model, tool_run, dict(UNKNOWN_GENERATION))


class Checks:
    """What every reader counts besides the records, and the lines it prints."""

    def where(self, row: Row) -> dict[str, Any]:
        """Where a row was read, as its record's metadata keeps it."""
        return {"file": row.file.name, "row": row.number, "index": row.get("index")}

    @staticmethod
    def counted(*counts: tuple[int, str]) -> list[str]:
        return [f"{n} {what}" for n, what in counts if n]


PROMPT_NOTE = ("VLMEvalKit's prediction files keep no prompt: each record's prompt is the "
               "dataset's own, rebuilt from the row; a model wrapper with its own prompt "
               "(use_custom_prompt) sent another")
