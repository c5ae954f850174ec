"""What a token costs, and who says so.

In order: the prices the user gives (`--price-in`/`--price-out`, US dollars per million
tokens: their contract, a discount, or 0 for their own server); for a hosted API, the price
table of the `genai-prices` library (pydantic's, MIT; bundled data, never updated over the
network by visioneval); the builtin baselines run locally and cost nothing. A model on the
user's own server (a loopback, private or single-label host) has no table price: the table
would give the hosted API's price for a model that runs for free, or for a fee no table knows.
What the provider reports per request (`Response.cost_usd`) wins over all of these; see
`visioneval.cost.total`.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from decimal import Decimal
from importlib.metadata import version
from typing import TYPE_CHECKING

from visioneval.backends.keys import host_of, redact_url
from visioneval.backends.registry import resolved_base_url

if TYPE_CHECKING:
    from visioneval.backends.registry import BackendSpec
    from visioneval.core.runfiles import BackendInfo, Pricing

MILLION = Decimal(1_000_000)
GIVEN = "--price-in/--price-out"
JUDGE_GIVEN = "--judge-price-in/--judge-price-out"
# What a missing price's line tells the user to do, said once (not in every line that
# names the missing price): the model under test takes --price-in/--price-out, its judge
# --judge-price-in/--judge-price-out, in US dollars per million tokens in and out.
MODEL_REMEDY = "--price-in USD --price-out USD per million tokens (0 and 0: your own server)"
JUDGE_REMEDY = ("--judge-price-in USD --judge-price-out USD per million tokens (0 and 0: "
                "your own server)")
PROBE_TOKENS = 1000  # the table is asked for 1000 tokens: the first tier of tiered prices


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens in and out, and where the numbers come from."""

    usd_in: Decimal
    usd_out: Decimal
    source: str

    @property
    def free(self) -> bool:
        return self.usd_in == 0 and self.usd_out == 0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal:
        return (self.usd_in * prompt_tokens + self.usd_out * completion_tokens) / MILLION

    def line(self) -> str:
        return (f"${_plain(self.usd_in)} in / ${_plain(self.usd_out)} out per million tokens "
                f"({self.source})")

    def in_batches(self, discount: Decimal) -> Price:
        """The price of the same tokens sent through the provider's batch API (`--batch`):
        `discount` times this one (0.5 at OpenAI and Anthropic)."""
        return Price(self.usd_in * discount, self.usd_out * discount,
                     f"{self.source}, at the batch API's {_plain(discount * 100)}%")


def _plain(value: Decimal) -> str:
    """2.5 for Decimal("2.5000"), 15 for Decimal("15.000")."""
    return format(value.normalize(), "f")


@dataclass(frozen=True)
class NoPrice:
    """Why a model has no price (said where the cost would be, and recorded), and what the
    user can do about it (`remedy`: said once where a command prints the cost)."""

    reason: str
    remedy: str = ""

    def line(self) -> str:
        """The reason and the remedy together (one line of a refusal)."""
        return f"{self.reason}: {self.remedy}" if self.remedy else self.reason


@dataclass(frozen=True)
class ModelRef:
    """Which model answers, and where: enough to look its price up."""

    kind: str
    model: str
    base_url: str | None = None

    @classmethod
    def from_recorded(cls, backend: BackendInfo) -> ModelRef:
        """From run.json's `backend`."""
        return cls(backend.kind, backend.model, backend.base_url)

    @classmethod
    def from_spec(cls, spec: BackendSpec) -> ModelRef:
        url = resolved_base_url(spec)
        return cls(spec.kind, spec.model, redact_url(url) if url else None)

    def label(self) -> str:
        where = f" at {host_of(self.base_url)}" if self.base_url else ""
        return f"{self.model}{where}"


def given_price(price_in: float | None, price_out: float | None,
                source: str = GIVEN) -> Price | None:
    """The user's prices, or None when not given (both or neither, checked by the options)."""
    if price_in is None or price_out is None:
        return None
    return Price(Decimal(str(price_in)), Decimal(str(price_out)), source)


def recorded_price(pricing: Pricing | None) -> Price | None:
    """The model's prices run.json keeps under `pricing` (None: none were given)."""
    if pricing is None:
        return None
    return given_price(pricing.price_in, pricing.price_out)


def recorded_judge_price(pricing: Pricing | None) -> Price | None:
    """The judge's prices run.json keeps under `pricing` (None: none were given)."""
    if pricing is None:
        return None
    return given_price(pricing.judge_price_in, pricing.judge_price_out, JUDGE_GIVEN)


def price_for(ref: ModelRef, given: Price | None = None,
              remedy: str = MODEL_REMEDY) -> Price | NoPrice:
    """The price of `ref`'s tokens: the user's, the builtin's nothing, or the table's;
    without one, the reason and `remedy` (what the user can do about it)."""
    if given is not None:
        return given
    if ref.kind in ("builtin", "none"):
        return Price(Decimal(0), Decimal(0), "builtin baseline: runs locally, free")
    if ref.kind == "human":
        return Price(Decimal(0), Decimal(0), "a person's answers: no tokens, no price")
    if not ref.base_url or self_hosted(ref.base_url):
        return NoPrice(f"no price for {ref.label()} (your own server?)", remedy)
    return table_price(ref.model, ref.base_url, remedy)


def self_hosted(base_url: str) -> bool:
    """A host no price table can know: loopback, private or link-local addresses, localhost,
    and single-label names (a machine on the local network)."""
    host = host_of(base_url).strip("[]")
    if host == "localhost" or host.endswith((".local", ".internal", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host
    return address.is_loopback or address.is_private or address.is_link_local


def table_version() -> str | None:
    try:
        return version("genai-prices")
    except Exception:  # not installed: the table is simply not there
        return None


@functools.lru_cache(maxsize=64)
def table_price(model: str, base_url: str, remedy: str = MODEL_REMEDY) -> Price | NoPrice:
    """The `genai-prices` table's price for `model` at the provider that serves `base_url`
    (its price today, first tier). Its data loads in about a second, once per process."""
    version = table_version()
    if version is None:
        return NoPrice(f"no price for {model}: genai-prices is not installed", remedy)
    # its table loads in about a second: only when a price is asked
    from genai_prices import Usage, calc_price

    try:
        calc = calc_price(Usage(input_tokens=PROBE_TOKENS, output_tokens=PROBE_TOKENS), model,
                          provider_api_url=base_url)
    except LookupError as exc:
        return NoPrice(f"no price for {model} at {host_of(base_url)} in genai-prices "
                       f"{version} ({exc})", remedy)
    scale = MILLION / PROBE_TOKENS
    return Price(Decimal(calc.input_price) * scale, Decimal(calc.output_price) * scale,
                 f"price table genai-prices {version}, {calc.provider.id} {calc.model.id}")
