"""The metrics of a benchmark that keeps the defaults: accuracy overall and per group, with a
95% bootstrap interval, and the one table that shows them (terminal, results.csv, report,
compare).

metrics.json is `{"score": KEY, "overall": BLOCK, "groups": {GROUP: BLOCK}}`; a block has `n`
(scored samples), `n_errors` (failed requests, left out of every score) and `accuracy` (the
mean of each record's score KEY, taken from its first score block that has it; an answer
scored without it counts as wrong) with `accuracy_se` and `accuracy_ci95`, or `unavailable`
with the reason when no sample was scored."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from visioneval import fmt
from visioneval.core.blocks import ComparisonTable, Note, Section, Table
from visioneval.core.headline import Headline, from_block
from visioneval.core.marks import Interval, percent
from visioneval.core.printed import print_table
from visioneval.core.records import Record
from visioneval.io import csvcells
from visioneval.stats.bootstrap import Outcomes, attach, mean_statistic, summaries
from visioneval.stats.exactsum import ExactSum

if TYPE_CHECKING:
    from rich.console import Console

    from visioneval.core.view import ReadableRun

T = TypeVar("T", bound="Tally")

HEADER = ["group", "n", "errors", "accuracy", "accuracy 95% interval"]
NOTE = ("Accuracy over scored answers; failed requests are errors, left out of every score. "
        "95% interval: bootstrap over samples (1000 seeded resamples); \"-\" with fewer than "
        "2 scored samples.")


def score(record: Record, key: str) -> float:
    """The record's value of `key`: its first score block that has it (else wrong)."""
    return next((float(block[key]) for block in record.scores.values() if key in block), 0.0)


class Tally:
    """One block's running counts, fed record by record (memory: a few bytes a sample). A
    benchmark that counts more per block extends it (`score`, `add`, `counts`, `result`)."""

    def __init__(self, key: str):
        self.key = key
        self.n = self.n_errors = 0
        self.correct = ExactSum()  # order-free: a merged run's sum equals a whole run's
        self.outcomes = Outcomes(1)

    def score(self, record: Record) -> float:
        return score(record, self.key)

    def add(self, record: Record) -> None:
        if not record.ok:
            self.n_errors += 1
            return
        value = self.score(record)
        self.n += 1
        self.correct += value
        self.outcomes.add(record.id, (value,))

    def counts(self) -> dict[str, Any]:
        return {"n": self.n, "n_errors": self.n_errors}

    def result(self) -> dict[str, Any]:
        out = self.counts()
        if not self.n:
            out["unavailable"] = f"no scored samples ({self.n_errors} failed requests)"
            return out
        out["accuracy"] = self.correct.value / self.n
        attach(out, summaries(self.outcomes.matrix(), mean_statistic, ("accuracy",)))
        return out


def by_group(records: Iterable[Record], make: Callable[[], T]) -> tuple[T, dict[str, T]]:
    """One pass over the records into a tally of the whole run and one per group (sorted)."""
    overall, groups = make(), {}
    for record in records:
        overall.add(record)
        if record.group not in groups:
            groups[record.group] = make()
        groups[record.group].add(record)
    return overall, dict(sorted(groups.items()))


def summarize(records: Iterable[Record], key: str = "correct") -> dict[str, Any]:
    """metrics.json in one pass over the records: the whole run and each group."""
    overall, groups = by_group(records, lambda: Tally(key))
    return {"score": key, "overall": overall.result(),
            "groups": {g: tally.result() for g, tally in groups.items()}}


def is_accuracy(metrics: dict[str, Any]) -> bool:
    """Whether metrics.json has this module's shape (a benchmark may summarize its own way)."""
    return isinstance(metrics.get("overall"), dict) and isinstance(metrics.get("groups"), dict)


def headline(metrics: dict[str, Any]) -> Headline | None:
    """The run's accuracy over every scored sample, with its interval (None for metrics of
    another shape)."""
    if not is_accuracy(metrics):
        return None
    return from_block("accuracy", metrics["overall"], "accuracy")


def blocks(metrics: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, block) per group, then overall; a single group is the overall row alone."""
    groups = list(metrics.get("groups", {}).items())
    overall = ("overall", metrics.get("overall", {}))
    return [*groups, overall] if len(groups) > 1 else [overall]


def rows(metrics: dict[str, Any]) -> list[list[Any]]:
    """The table's rows, in percent with one decimal ("-" where there is no value)."""
    return [[name, block.get("n", 0), block.get("n_errors", 0),
             fmt.pct(block.get("accuracy"), missing="-"),
             fmt.interval(block.get("accuracy_ci95"))] for name, block in blocks(metrics)]


def section(metrics: dict[str, Any]) -> Section:
    return Section("Results (percent)", [Table(HEADER, rows(metrics)), Note(NOTE)])


RECOMPUTED = ("Accuracy of each record's \"{key}\" score, recomputed from the samples "
              "(this benchmark writes metrics of its own, below); failed requests are errors, "
              "left out. 95% interval: bootstrap over samples (1000 seeded resamples).")
OWN_ROWS = 200  # the most values of a benchmark's own metrics.json the page lists


def own_sections(view: ReadableRun, key: str) -> list[Section]:
    """The report of a benchmark that summarizes its own way: the accuracy table recomputed
    from the records when they carry `key` (the benchmark's `metric`), then every number of
    its metrics.json, one row each."""
    seen = False

    def counted() -> Iterable[Record]:
        nonlocal seen
        for record in view.iter_records():
            seen = seen or any(key in block for block in record.scores.values())
            yield record

    recomputed = summarize(counted(), key)
    shown = [Section("Results (percent)", [Table(HEADER, rows(recomputed)),
                                           Note(RECOMPUTED.format(key=key))])] if seen else []
    values = list(_numbers(view.metrics))
    if values:
        blocks: list[Table | Note] = [Table(["metric", "value"], values[:OWN_ROWS])]
        if len(values) > OWN_ROWS:
            blocks.append(Note(f"The first {OWN_ROWS} of {len(values)} values; every one is "
                               "in metrics.json."))
        shown.append(Section("Metrics (metrics.json)", list(blocks)))
    return shown


def _numbers(metrics: Any, path: str = "") -> Iterable[list[Any]]:
    """metrics.json's values as (path, value) rows: nested keys joined by "/", lists by
    index, numbers with up to 4 decimals."""
    if isinstance(metrics, dict):
        for name, value in metrics.items():
            yield from _numbers(value, f"{path}/{name}" if path else str(name))
    elif isinstance(metrics, list) and not all(isinstance(v, int | float) for v in metrics):
        for index, value in enumerate(metrics):
            yield from _numbers(value, f"{path}/{index}")
    elif isinstance(metrics, float):
        yield [path, f"{metrics:.4f}".rstrip("0").rstrip(".")]
    elif isinstance(metrics, list):
        yield [path, ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                               for v in metrics)]
    else:
        yield [path, "-" if metrics is None else str(metrics)]


def write_csv(metrics: dict[str, Any], directory: Path) -> Path:
    """results.csv beside metrics.json: the table's rows, fractions as percent."""
    buf = io.StringIO()
    writer = csvcells.writer(buf, lineterminator="\n")
    writer.writerows([HEADER, *rows(metrics)])
    path = directory / "results.csv"
    path.write_text(buf.getvalue())
    return path


def show(metrics: dict[str, Any], title: str, console: Console) -> None:
    """The table in the terminal: accuracy and its 95% interval per group (percent)."""
    print_table(console, f"{title} (percent)", HEADER, rows(metrics))


def comparison(benchmark: str, views: Sequence[ReadableRun]) -> ComparisonTable | None:
    """Accuracy per run, overall and per group (None unless every run has these metrics)."""
    if not views or not all(is_accuracy(v.metrics) for v in views):
        return None
    groups = list(dict.fromkeys(g for v in views for g in v.metrics["groups"]))
    groups = groups if len(groups) > 1 else []
    header = ["Model", "Run", "Accuracy", *[f"{g} accuracy" for g in groups]]
    table_rows, intervals = [], []
    for view in views:
        found = [view.metrics["overall"], *[view.metrics["groups"].get(g, {}) for g in groups]]
        table_rows.append([view.model, view.directory.name,
                           *[fmt.pct(b.get("accuracy")) for b in found]])
        spans: list[Interval | None] = [None, None]
        intervals.append(spans + [percent(b.get("accuracy_ci95")) for b in found])
    return ComparisonTable(benchmark, header, table_rows, [True] * (len(header) - 2),
                           runs=list(views), intervals=intervals, notes=[NOTE])
