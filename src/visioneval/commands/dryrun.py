"""`--dry-run` on any benchmark command: count what the run would send and what it would
cost, then stop. No request is sent (not even the preflight), no run directory is created
or changed, no cache is read or written; the dataset is read (and downloaded once, as a run
would) to count the samples and read each image's size from its header."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from typing import Any

from visioneval.backends.batch.base import BATCH_DISCOUNT
from visioneval.backends.batch.clients import PROVIDERS
from visioneval.backends.registry import BackendSpec
from visioneval.core.benchmark import Benchmark
from visioneval.core.idset import IdSet
from visioneval.core.records import GenerationSettings, Sample, SkippedRow
from visioneval.core.store import RunStore
from visioneval.cost import estimate
from visioneval.cost.images import image_rule
from visioneval.cost.money import usd
from visioneval.cost.prices import (
    JUDGE_GIVEN,
    ModelRef,
    NoPrice,
    Price,
    given_price,
    price_for,
    recorded_judge_price,
    recorded_price,
)
from visioneval.cost.total import PANEL_REMEDY, role_prices
from visioneval.epochs.family import rebuilt
from visioneval.io.parquet import DataError
from visioneval.runs.detectable import dry_run_line, paired_difference
from visioneval.runs.output import Output
from visioneval.runs.request import ResumeRequest
from visioneval.runs.restated import check_restated
from visioneval.runs.resume import definition_for_resume
from visioneval.runs.session import nothing_to_evaluate, shard_key
from visioneval.runs.spec import RunSpec
from visioneval.runs.target import resume_command
from visioneval.shards import Shard
from visioneval.terminal import line


def dry_run(spec: RunSpec, output: Output) -> int:
    """A new run's estimate (of its shard of the samples, or all of them); on Ray or not,
    the same requests are sent."""
    engine, benchmark = spec.engine, spec.build()
    counted = spec.shard is None and not benchmark.panel  # no data needed
    if not (counted and benchmark.published_rows()) and benchmark.total() == 0:
        raise DataError(nothing_to_evaluate(benchmark))
    return _print(benchmark, spec.backend, spec.settings(),
                  given_price(engine.price_in, engine.price_out), output, spec.shard,
                  judge_given=given_price(engine.judge_price_in, engine.judge_price_out,
                                          JUDGE_GIVEN))


def dry_run_resume(request: ResumeRequest, output: Output) -> int:
    """What `--resume` would still send: the samples without a successful record. The
    benchmark is rebuilt by the trust rule (`registry.build_for_run`): a run of a user's own
    benchmark needs its definition named again; only to be read (nothing is solved)."""
    directory, expected = request.directory, request.expected
    engine = request.given.flags.new_run()
    store = RunStore.open(directory)
    info = store.info
    if expected is not None and info.benchmark != expected:
        raise ValueError(f"{directory} is a {info.benchmark} run; resume it with "
                         f"`{resume_command(info, directory)}`")
    definition = definition_for_resume(info, request.given.definition, directory)
    benchmark = rebuilt(definition.build_to_read(dict(info.options)), info, definition)
    check_restated(info, definition, benchmark, request.given.restated, directory)
    stored = info.backend
    spec = BackendSpec.model_validate({"kind": stored.kind, "model": stored.model,
                                       "base_urls": tuple(stored.base_urls),
                                       "api_key_env": stored.api_key_env})
    settings = info.generation.settings()
    given = given_price(engine.price_in, engine.price_out) or recorded_price(info.pricing)
    judge_given = given_price(engine.judge_price_in, engine.judge_price_out, JUDGE_GIVEN) \
        or recorded_judge_price(info.pricing)
    done = IdSet(r.id for r in store.iter_latest() if r.ok)
    return _print(benchmark, spec, settings, given, output, info.shard, done, judge_given)


def _print(benchmark: Benchmark, spec: BackendSpec, settings: GenerationSettings,
           given: Price | None, output: Output, shard: Shard | None,
           done: Container[str] = (), judge_given: Price | None = None) -> int:
    """One estimate per model that answers samples: the run's model, then each panel
    model with its own samples and price (the user's prices are the run's model's)."""
    if spec.kind == "human":
        return _print_person(benchmark, spec, settings, output, shard, done)
    models = [spec, *benchmark.panel]
    for position, member in enumerate(models):
        ref = ModelRef.from_spec(member)
        rule = image_rule(member.model)
        if shard is None and len(models) == 1:  # the published counts, when they serve
            found = estimate.planned(benchmark, settings, rule, done)
        else:
            items: Iterable[Sample | SkippedRow] = benchmark.samples()
            if shard is not None:
                items = _in_shard(items, shard)
            if len(models) > 1:
                items = _answered_by(benchmark, items, position)
            found = estimate.estimate(items, settings, rule, done)
        if position and not found.samples:  # a model the solver asks, as a judge step
            line(output.console, f"panel model {position}, {member.kind} {ref.label()}, "
                 "answers no sample of its own: the requests the benchmark's solver sends it "
                 "are not estimated")
            continue
        who = f"{benchmark.name} on {member.kind} {ref.label()}" + \
            (f", shard {shard.label}" if shard else "") + \
            (f" (panel model {position})" if position else "")
        price = price_for(ref, given) if position == 0 or ref == ModelRef.from_spec(spec) \
            else judge_given or price_for(ref, None, PANEL_REMEDY)  # a panel is of judges
        judged = _judge_lines(benchmark, spec, found, given, judge_given) if position == 0 \
            else []
        for text in [*estimate.lines(found, who, rule, price, settings,
                                     _not_counted(benchmark, bool(judged))),
                     *judged, *_batch_lines(found, member, price, position)]:
            line(output.console, text)
        _print_power(benchmark, found, len(models), output)
    return 0


TRIAL_S = 1.5
"""A person's trial, about: the fixation cross (0.5 s), an answer (0.5 to 1 s on these
stimuli) and the blank screen (0.25 s), at the page's defaults."""


def _print_person(benchmark: Benchmark, spec: BackendSpec, settings: GenerationSettings,
                  output: Output, shard: Shard | None, done: Container[str]) -> int:
    """A person's run: the trials and about how long they take (no tokens, no price)."""
    items: Iterable[Sample | SkippedRow] = benchmark.samples()
    if shard is not None:
        items = _in_shard(items, shard)
    found = estimate.estimate(items, settings, None, done)
    minutes = found.requests * TRIAL_S / 60
    who = f"{benchmark.name} by observer {spec.model}" + (f", shard {shard.label}" if shard
                                                          else "")
    for text in (f"dry run for {who}: nothing shown, nothing written",
                 f"  trials          {found.requests:,}" + (f" ({found.done:,} answered "
                                                            "before)" if found.done else ""),
                 f"  time            about {max(minutes, 1):.0f} min at about {TRIAL_S:g} s "
                 "a trial with the page's defaults, breaks aside",
                 "  cost            none (a person's answers: no tokens, no price)"):
        line(output.console, text)
    return 0


def _print_power(benchmark: Benchmark, found: estimate.Estimate, models: int,
                 output: Output) -> None:
    """The paired difference the planned samples detect (`visioneval power`), beside the
    cost: for one model answering one request per sample on a 0/1 headline."""
    difference = paired_difference(benchmark, found.requests + found.done, models)
    if difference is not None:
        line(output.console, dry_run_line(difference))


def _batch_lines(found: estimate.Estimate, spec: BackendSpec, price: Price | NoPrice,
                 position: int) -> list[str]:
    """The same requests' cost through the provider's batch API (`--batch`), beside the
    normal price: only for the run's model on a backend that has one."""
    if position or spec.kind not in PROVIDERS or isinstance(price, NoPrice):
        return []
    low, high = found.cost_range(price.in_batches(BATCH_DISCOUNT))
    return [f"  batch cost      {usd(float(low))} to {usd(float(high))} with --batch "
            f"({PROVIDERS[spec.kind]}: {float(BATCH_DISCOUNT):.0%} of the price, answers "
            "within 24 hours)"]


def _answered_by(benchmark: Benchmark, items: Iterable[Sample | SkippedRow], position: int
                 ) -> Iterator[Sample | SkippedRow]:
    """The samples the model at `position` answers (skipped rows with the run's model)."""
    for item in items:
        if isinstance(item, SkippedRow):
            if position == 0:
                yield item
        elif benchmark.panel_of(item) == position:
            yield item


def _in_shard(items: Iterable[Sample | SkippedRow], shard: Shard
              ) -> Iterator[Sample | SkippedRow]:
    return (item for item in items if shard.holds(shard_key(item)))


def _judge_lines(benchmark: Benchmark, spec: BackendSpec, found: estimate.Estimate,
                 given: Price | None, judge_given: Price | None) -> list[str]:
    """The judge's requests and their price (--judge-price-in/--judge-price-out, else as a
    run prices it), for a benchmark whose answers a judge model grades."""
    judge = benchmark.judge
    if judge is None:
        return []

    ref = ModelRef.from_spec(judge)
    price = role_prices(ModelRef.from_spec(spec), ref, given, (), judge_given)["judge"]
    return estimate.judge_lines(found, f"{judge.kind} {ref.label()}", price)


def _not_counted(benchmark: Benchmark, judged: bool = False) -> str | None:
    """What the estimate leaves out: a judge's requests past one per answer, a solver's
    extra ones."""
    judge: Any = benchmark.judge
    if judge is not None:
        return (f"the judge's requests ({judge.kind} {judge.model}) past one per answer, and "
                "the judge's answers" if judged else
                f"the judge's requests ({judge.kind} {judge.model}): at least one per "
                "answer, not estimated")
    if not benchmark.one_request_each:
        return ("requests the benchmark's solver may add (a judge asked several times, a "
                "repair): each sample is counted as one request")
    return None
