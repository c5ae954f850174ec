"""`visioneval suite FILE --dry-run`: every run of the suite, what it would still send and
cost, and the totals; nothing is sent and nothing is written (as a run's `--dry-run`)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from visioneval.backends.batch.base import BATCH_DISCOUNT
from visioneval.core.idset import IdSet
from visioneval.core.rowcounts import PublishedRows
from visioneval.core.store import RUN_FILE, RunStore
from visioneval.cost import estimate
from visioneval.cost.images import image_rule
from visioneval.cost.money import usd
from visioneval.cost.prices import ModelRef, NoPrice, given_price, price_for
from visioneval.runs.detectable import WORST_DISCORDANCE, paired_difference
from visioneval.suite.plan import PlannedRun, SuitePlan


@dataclass(frozen=True)
class RunEstimate:
    run: PlannedRun
    requests: int
    input_tokens: int
    output_tokens: int
    cost: tuple[Decimal, Decimal] | None  # None: unknown
    why_unknown: str = ""
    resumed: int = 0
    detectable: float | None = None  # `visioneval power`'s paired difference at this n
    published: PublishedRows | None = None  # counted from the data's published rows


def estimate_run(run: PlannedRun) -> RunEstimate:
    """What `run` would still send (the samples its directory does not hold yet), priced
    as it will be paid (a model with `batch = true` at the batch API's price), and the
    paired difference its samples can detect when its headline is a proportion."""
    benchmark = run.build()
    done: IdSet | frozenset[str] = frozenset()
    if (run.directory / RUN_FILE).is_file():
        done = IdSet(r.id for r in RunStore.open(run.directory).iter_latest() if r.ok)
    rule = image_rule(run.model.model)
    found = estimate.planned(benchmark, run.settings, rule, done)
    price = price_for(ModelRef.from_spec(run.spec.backend),
                      given_price(run.model.price_in, run.model.price_out))
    prompt = found.prompt.total if found.prompt else 0
    detectable = paired_difference(benchmark, found.requests + found.done,
                                   1 + len(benchmark.panel))
    if isinstance(price, NoPrice):
        return RunEstimate(run, found.requests, prompt, found.max_output_tokens, None,
                           price.reason, found.done, detectable, found.published)
    if run.model.batch:
        price = price.in_batches(BATCH_DISCOUNT)
    return RunEstimate(run, found.requests, prompt, found.max_output_tokens,
                       found.cost_range(price), resumed=found.done, detectable=detectable,
                       published=found.published)


def published_notes(rows: list[RunEstimate]) -> list[str]:
    """Where the counts of runs that read no data come from, once per dataset, and the
    parts a run could not count."""
    sources = {(e.published.dataset, e.published.revision): None for e in rows if e.published}
    out = [f"rows of {dataset}: its published counts (revision {revision}), no data read"
           for dataset, revision in sources]
    if sources:
        out.append("input tokens without the data: the prompts' text (estimated where the "
                   "questions are in the data), not the images'")
    missing: dict[tuple[str, ...], int] = {}
    for e in rows:
        if e.published is not None and e.published.unknown():
            parts = tuple(e.published.unknown())
            missing[parts] = missing.get(parts, 0) + 1
    out += [f"{', '.join(parts)}: not counted in {n} run{'s' if n > 1 else ''} (no published "
            "row count; data_dir or num_samples counts them)" for parts, n in missing.items()]
    return out


def show(plan: SuitePlan, console: Console) -> int:
    """The runs' estimates as a table with a total row; exit code 0."""
    rows = [estimate_run(run) for run in plan.runs]
    table = Table("run", "requests", "input tokens", "max output", "cost", "detects",
                  box=None,
                  pad_edge=False, title=escape(f"suite {plan.name}: {len(rows)} runs, "
                                               f"{len(plan.lanes)} at a time, into {plan.out} "
                                               "(dry run: nothing sent, nothing written)"))
    table.columns[4].no_wrap = True  # a price range reads as one
    low = high = Decimal(0)
    unknown = []
    for e in rows:
        done = f" ({e.resumed:,} done)" if e.resumed else ""
        table.add_row(escape(e.run.label), f"{e.requests:,}{done}",
                      f"~{e.input_tokens:,}", f"{e.output_tokens:,}",
                      (f"{usd(float(e.cost[0]))} to {usd(float(e.cost[1]))}"
                       + (" *" if e.run.model.batch else "")) if e.cost else "unknown",
                      f"±{100 * e.detectable:.1f}" if e.detectable is not None else "-")
        if e.cost is None:
            unknown.append(f"{e.run.label}: {e.why_unknown}")
        else:
            low += e.cost[0]
            high += e.cost[1]
    table.add_row("total", f"{sum(e.requests for e in rows):,}",
                  f"~{sum(e.input_tokens for e in rows):,}",
                  f"{sum(e.output_tokens for e in rows):,}",
                  f"{usd(float(low))} to {usd(float(high))}"
                  + (f" + {len(unknown)} unknown" if unknown else ""), "", style="bold")
    console.print(table)
    for line in unknown:
        console.print(f"cost unknown for {line}", highlight=False,
                      markup=False)
    if unknown:  # how to price them, once
        console.print("to price a model: price_in and price_out in its [[models]] table, US "
                      "dollars per million tokens (0 and 0 for your own server)",
                      highlight=False, soft_wrap=True, markup=False)
    console.print("cost: input only, up to every answer at max tokens; a judge's requests "
                  "are not counted", highlight=False, markup=False)
    for text in published_notes(rows):
        console.print(text, highlight=False, markup=False)
    if any(e.run.model.batch for e in rows):
        console.print("*: through the provider's batch API (the model's batch = true), at "
                      "that API's price; answers within 24 hours",
                      highlight=False, markup=False)
    if any(e.detectable is not None for e in rows):
        console.print(f"detects: the paired difference in points each run's samples detect "
                      f"against another model's run on the same samples (McNemar, alpha "
                      f"0.05, power 0.8, discordance assumed {WORST_DISCORDANCE:g}); "
                      "`visioneval power` refines it from pilot runs", highlight=False,
                      markup=False)
    return 0
