"""`--dry-run`: what a run would send, before anything is sent or written.

Every sample still to do is read (images by their header only) and its request counted:
input tokens by `visioneval.cost.images` (text as characters / 4; images by the model's
provider's published rule, or unknown), output tokens up to `max_tokens` each. The cost is
a range: the input's estimate with no output, up to every answer using all of `max_tokens`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sized
from dataclasses import dataclass
from decimal import Decimal

from visioneval.core.benchmark import Benchmark
from visioneval.core.records import GenerationSettings, Request, Sample, SkippedRow
from visioneval.core.rowcounts import PublishedRows
from visioneval.cost.images import ImageRule, text_tokens
from visioneval.cost.money import usd
from visioneval.cost.prices import NoPrice, Price


@dataclass
class PromptTokens:
    """One request's (or many requests') estimated input."""

    chars: int = 0
    images: int = 0
    image_tokens: int = 0
    unknown_images: int = 0  # images of a model with no known rule

    @property
    def text(self) -> int:
        return text_tokens(self.chars)

    @property
    def total(self) -> int:
        return self.text + self.image_tokens

    def add(self, other: PromptTokens) -> None:
        self.chars += other.chars
        self.images += other.images
        self.image_tokens += other.image_tokens
        self.unknown_images += other.unknown_images


def request_tokens(request: Request, rule: ImageRule | None) -> PromptTokens:
    out = PromptTokens()
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, str):
                out.chars += len(part)
                continue
            out.images += 1
            if rule is None:
                out.unknown_images += 1
            else:
                out.image_tokens += rule.tokens(part.width, part.height)
    return out


@dataclass
class Estimate:
    """What the samples to do would send."""

    requests: int = 0
    samples: int = 0
    done: int = 0  # recorded by earlier sessions: not sent again
    no_model: int = 0  # samples answered without a model (code validators)
    skipped_rows: int = 0
    prompt: PromptTokens | None = None
    max_output_tokens: int = 0
    published: PublishedRows | None = None  # counted from the published rows, no data read

    def cost_range(self, price: Price) -> tuple[Decimal, Decimal]:
        """(input only, input and every answer at max_tokens)."""
        prompt = self.prompt.total if self.prompt else 0
        return price.cost(prompt, 0), price.cost(prompt, self.max_output_tokens)


def estimate(items: Iterable[Sample | SkippedRow], settings: GenerationSettings,
             rule: ImageRule | None, done: Container[str] = ()) -> Estimate:
    """Count the requests of `items` not in `done` (one per sample with a prompt)."""
    out = Estimate(prompt=PromptTokens())
    assert out.prompt is not None
    for item in items:
        if isinstance(item, SkippedRow):
            out.skipped_rows += 1
            continue
        out.samples += 1
        if item.id in done:
            out.done += 1
        elif not item.messages:
            out.no_model += 1
        else:
            out.requests += 1
            out.prompt.add(request_tokens(Request(item.messages, settings), rule))
            out.max_output_tokens += settings.max_tokens
    return out


def planned(benchmark: Benchmark, settings: GenerationSettings, rule: ImageRule | None,
            done: Container[str] = ()) -> Estimate:
    """What a run of `benchmark` would send: from the published row counts when it reads
    the published data and ships them (nothing is downloaded), else from its samples."""
    published = benchmark.published_rows()
    if published is None:
        return estimate(benchmark.samples(), settings, rule, done)
    return from_published(published, settings, rule, len(done) if isinstance(done, Sized)
                          else 0)


def from_published(published: PublishedRows, settings: GenerationSettings,
                   rule: ImageRule | None, done: int = 0) -> Estimate:
    """The estimate of a run from its data's published row counts: each request a typical
    prompt's text and its images, whose sizes are unknown without the data (their tokens
    are not counted)."""
    total = published.requests()
    requests = max(0, total - done)
    images = published.images() * requests // total if total else 0
    prompt = PromptTokens(chars=requests * published.prompt_chars, images=images,
                          unknown_images=images)
    return Estimate(requests=requests, samples=total, done=min(done, total), prompt=prompt,
                    max_output_tokens=requests * settings.max_tokens, published=published)


def published_lines(published: PublishedRows) -> list[str]:
    """Where a dry run's counts come from when it read no data, and what is estimated."""
    counted = ", ".join(f"{part} {published.rows(part):,}" for part in published.parts
                        if published.rows(part) is not None)
    out = [f"  rows            {counted or 'none'}: published counts, nothing downloaded",
           f"  source          {published.dataset}, revision {published.revision}"]
    if published.bounded():
        out.append(f"  rows unknown    {', '.join(published.bounded())}: counted as "
                   f"--num-samples {published.limit:,} each (at most)")
    if published.unknown():
        out.append(f"  not counted     {', '.join(published.unknown())}: no published row "
                   "count (--data-dir or --num-samples counts them)")
    text = "a typical prompt's text" if published.chars_source else "the prompts' text"
    out.append(f"  estimate        input tokens from {text}, not the images' (in the data)")
    return out


def lines(est: Estimate, who: str, rule: ImageRule | None, price: Price | NoPrice,
          settings: GenerationSettings, extra_requests: str | None = None) -> list[str]:
    """The dry run's printout: requests, tokens, cost range, and what it leaves out."""
    prompt = est.prompt or PromptTokens()
    out = [f"dry run for {who}: nothing sent, nothing written",
           f"  requests        {est.requests:,}"
           + (f" ({est.done:,} samples done before are not sent again)" if est.done else "")
           + (f"; {est.no_model:,} samples need no model" if est.no_model else "")]
    if est.published is not None:
        out.extend(published_lines(est.published))
    if est.skipped_rows:
        out.append(f"  rows skipped    {est.skipped_rows:,} (they would be skipped by the run)")
    image_part = ""
    if est.published is not None and prompt.images:
        image_part = f"; {prompt.images:,} images not counted"
    elif prompt.images:
        image_part = (f"; images {prompt.image_tokens:,} by {rule.name}" if rule else
                      f"; {prompt.images:,} images: tokens unknown (no published rule known "
                      "for this model)")
    out.append(f"  input tokens    ~{prompt.total:,} (text {prompt.text:,} as characters / 4"
               f"{image_part})")
    out.append(f"  output tokens   at most {est.max_output_tokens:,} "
               f"({est.requests:,} x max tokens {settings.max_tokens})")
    if isinstance(price, NoPrice):
        out.append(f"  cost            unknown: {price.reason}")
        if price.remedy:
            out.append(f"  to price it     {price.remedy}")
    else:
        low, high = est.cost_range(price)
        partial = " (image tokens not counted)" if prompt.unknown_images and not price.free \
            else ""
        out.append(f"  price           {price.line()}")
        out.append(f"  cost            {usd(float(low))} to {usd(float(high))}{partial} "
                   "(input only, up to every answer at max tokens)")
    if extra_requests:
        out.append(f"  not counted     {extra_requests}")
    return out


def judge_lines(est: Estimate, judge: str, price: Price | NoPrice) -> list[str]:
    """A judge's part of the estimate: at least one request per answer, each holding at
    least the model's prompt (the image and question it grades), priced at the judge's
    price; the answers it writes are not bounded here."""
    prompt = est.prompt.total if est.prompt else 0
    out = [f"  judge requests  at least {est.requests:,} (one per answer) to {judge}",
           f"  judge input     at least ~{prompt:,} tokens (each holds the model's prompt)"]
    if isinstance(price, NoPrice):
        out.append(f"  judge cost      unknown: {price.reason}")
        if price.remedy:
            out.append(f"  to price it     {price.remedy}")
        return out
    partial = " (image tokens not counted)" if est.prompt and est.prompt.unknown_images \
        and not price.free else ""
    out.append(f"  judge price     {price.line()}")
    out.append(f"  judge cost      at least {usd(float(price.cost(prompt, 0)))}{partial} (its "
               "input alone)")
    return out

