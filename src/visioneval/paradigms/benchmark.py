"""A classic paradigm run as a benchmark: its stored stimuli sent as they are, each answer
read as one of the trial's options (or, for an estimate, as a number within the asked
range), and the curves fitted from the counts. A paradigm's folder subclasses
`ParadigmBenchmark` with its `Paradigm`; nothing here names one."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from visioneval.core.benchmark import Benchmark
from visioneval.core.records import Record, Sample, user
from visioneval.core.rows import DataRow, ParquetRows, Skip
from visioneval.core.runfiles import RunInfo
from visioneval.io import parquet
from visioneval.paradigms import answers, ranking, tables
from visioneval.paradigms.dataset import COLUMNS
from visioneval.paradigms.fits import fit_curves, tally
from visioneval.paradigms.metrics import Human, ParadigmMetrics, SummaryBlock
from visioneval.paradigms.options import ParadigmOptions
from visioneval.paradigms.paradigm import Paradigm, Reader
from visioneval.stats.midmean import log2_error


class ParadigmBenchmark(Benchmark[ParadigmOptions]):
    """`paradigm`: what the subclass measures. The builtin `reader` model answers from the
    pixels with the paradigm's classical reader."""

    paradigm: ClassVar[Paradigm]
    builtin_models = ("reader", "random")

    def __init__(self, options: ParadigmOptions):
        super().__init__(options)
        root = Path(options.data)
        name = self.paradigm.name
        if not root.is_dir():
            raise parquet.DataError(f"{root}: no such folder (make one with `visioneval data "
                                    f"synth-{name} --out DIR`)")
        present = sorted(p.name for p in root.iterdir()
                         if p.is_dir() and any(p.glob("*.parquet")))
        known = [c.name for c in self.paradigm.conditions()]
        present = [c for c in known if c in present] + [c for c in present if c not in known]
        wanted = options.conditions or present
        absent = [c for c in wanted if c not in present]
        if absent or not wanted:
            raise parquet.DataError(f"{root}: no folder for condition(s) "
                                    f"{', '.join(absent) or '(any)'} of {name} (it has "
                                    f"{', '.join(present) or 'none'}; write them with "
                                    f"`visioneval data synth-{name}`)")
        self.root = root
        self.files = {c: parquet.parquet_files(root / c) for c in wanted}

    @cached_property
    def rows(self) -> ParquetRows:
        return ParquetRows(self.root, self.files, COLUMNS, (), self.options.num_samples,
                           str(self.root))

    def data(self) -> ParquetRows:
        return self.rows

    def reader(self) -> Reader:
        """The builtin `reader` model's answer function (`baselines.hints.ReadsPixels`)."""
        return self.paradigm.reader

    def sample(self, row: DataRow) -> Sample:
        paradigm = row.text("paradigm")
        if paradigm != self.paradigm.name:
            raise Skip(f"{row.file}: field `paradigm`: {paradigm!r} is not "
                       f"{self.paradigm.name!r}")
        condition, kind = row.text("condition"), row.text("kind")
        if condition != row.group:
            raise Skip(f"{row.file}: field `condition`: {condition!r} in the {row.group} "
                       "folder")
        if kind != self.paradigm.kind:
            raise Skip(f"{row.file}: field `kind`: {kind!r} is not {self.paradigm.kind!r}")
        level = row["level"]
        if isinstance(level, bool) or not isinstance(level, int | float) or \
                not math.isfinite(level):
            raise Skip(f"{row.file}: field `level`: {level!r} is not a finite number")
        options = tuple(str(o) for o in (row["options"] or ()))
        answer = row["answer"]
        if answer is not None and not isinstance(answer, str):
            raise Skip(f"{row.file}: field `answer`: {answer!r} is not text")
        # "" is a comparison's answer at level 0, where neither option is right
        target, positive = answer or "", row.text("positive") if row["positive"] else ""
        if kind == "choice" and (len(options) != self.paradigm.alternatives or
                                 target not in options):
            raise Skip(f"{row.file}: field `answer`: {target!r} is not one of its "
                       f"{self.paradigm.alternatives} options {list(options)}")
        if kind == "comparison" and (len(options) != 2 or positive not in options or
                                     target not in (*options, "")):
            raise Skip(f"{row.file}: fields `options`/`positive`/`answer`: a comparison "
                       f"needs two options, one of them positive (got {list(options)}, "
                       f"{positive!r}, {target!r})")
        if kind == "estimate" and _answer_range(options) is None:
            raise Skip(f"{row.file}: field `options`: an estimate needs the lowest and the "
                       f"highest answer, two numbers (got {list(options)})")
        try:
            geometry = json.loads(row.text("stimulus") or "{}")
        except ValueError:
            raise Skip(f"{row.file}: field `stimulus` is not JSON") from None
        return Sample(id=row.text("id"), group=row.group, target=target,
                      messages=(user(row.image(), row.text("question")),),
                      metadata={"row": row.index, "condition": condition,
                                "level": float(level), "unit": row.text("unit"),
                                "options": list(options), "positive": positive,
                                "stimulus": geometry})

    def score(self, sample: Sample, text: str) -> tuple[dict[str, Any], dict[str, dict]]:
        options = tuple(sample.metadata.get("options") or ())
        if self.paradigm.kind == "estimate":
            return _estimate(text, options, float(sample.metadata["level"]))
        answer = answers.option(text, options)
        counted_as = sample.metadata.get("positive") or sample.target
        block = {"unparsed": float(answer is None),
                 "counted": float(answer is not None and answer == counted_as)}
        if sample.target:
            block["correct"] = float(answer == sample.target)
        return {"answer": answer}, {"answer": block}

    def headline_outcome(self, record: Record) -> float | None:
        return None

    def headline_proportion(self) -> str | None:
        return None

    def summarize(self, records: Iterable[Record]) -> dict[str, Any]:
        p = self.paradigm
        fitted = ranking.ranked(fit_curves(p, tally(records), self.options.bootstrap,
                                           self.options.seed), p.kind)
        curves = [f.curve for f in fitted]
        summaries = [SummaryBlock(name=s.name, unit=s.unit, value=s.value, ci95=s.ci95,
                                  reason=s.reason, note=s.note, headline=s.headline,
                                  width=s.width)
                     for s in [*ranking.agreement(fitted, p.kind, p.ranked_by),
                               *p.summaries(fitted)]]
        return ParadigmMetrics(
            paradigm=p.name, title=p.title, kind=p.kind, unit=p.unit, counted=p.counted,
            n=sum(c.n for c in curves), n_errors=sum(c.n_errors for c in curves),
            n_unparsed=sum(c.n_unparsed for c in curves),
            n_out_of_range=sum(c.n_out_of_range for c in curves), ranked_by=p.ranked_by,
            bootstrap=self.options.bootstrap, dispersion_model=p.dispersion,
            curves=curves, summaries=summaries,
            human=[Human(quantity=h.quantity, value=h.value, source=h.source,
                         conditions=h.conditions, comparable=h.comparable)
                   for h in p.human]).model_dump(mode="json")

    def write_tables(self, metrics: dict[str, Any], info: RunInfo,
                     directory: Path) -> list[Path]:
        return [tables.write_csv(metrics, directory)]


def _answer_range(options: tuple[str, ...]) -> tuple[float, float] | None:
    """An estimate's (lowest, highest) answer from its two options; None if they are not
    two numbers in order."""
    try:
        low, high = (float(o) for o in options)
    except ValueError:
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) and low < high else None


def _estimate(text: str, options: tuple[str, ...], true: float
              ) -> tuple[dict[str, Any], dict[str, dict]]:
    """The reply's one number; one outside the asked range is counted and in no error (it
    does not answer the question asked), as one that is no number is."""
    value = answers.number(text)
    low, high = _answer_range(options) or (-math.inf, math.inf)
    inside = value is not None and low <= value <= high
    block = {"unparsed": float(value is None),
             "out_of_range": float(value is not None and not inside)}
    if inside and value is not None:
        block["judged"] = value
        block["error"] = log2_error(value, true)
    return {"answer": value}, {"answer": block}
