"""A run's cost from its sessions' usage: what run.json keeps under `counts.cost`.

Per role (the model under test, its judge, its panel models) and group: the cost the
provider reported for the answers that carried one, plus the tokens of the others at the
role's price. No price for tokens that need one makes the cost absent with the reason, never
0; a price of 0 (the user's own server, a builtin baseline) makes it a real 0."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from visioneval.cost.prices import JUDGE_REMEDY, ModelRef, NoPrice, Price, price_for
from visioneval.cost.usage import UsageBook, UsageCount, panel_role

if TYPE_CHECKING:
    from visioneval.core.runfiles import SessionInfo

NO_USAGE = "no answer reported usage (failed requests are taken as free)"
NOTHING_SENT = "no request sent: every answer came from the cache or needed no model"
PANEL_REMEDY = ("--judge-price-in USD --judge-price-out USD price a panel's judges (0 and 0: "
                "your own server)")


@dataclass(frozen=True)
class Cost:
    """Dollars (None: unknown, with `unavailable` saying why) and where they come from."""

    usd: Decimal | None
    sources: tuple[str, ...] = ()
    unavailable: str | None = None

    def __add__(self, other: Cost) -> Cost:
        sources = tuple(dict.fromkeys(self.sources + other.sources))
        reasons = [r for r in (self.unavailable, other.unavailable) if r]
        if reasons:
            return Cost(None, sources, "; ".join(dict.fromkeys(reasons)))
        return Cost((self.usd or Decimal(0)) + (other.usd or Decimal(0)), sources)


def cost_of(count: UsageCount, price: Price | NoPrice, who: str) -> Cost:
    """One role's (or group's) cost: reported dollars plus priced tokens."""
    usd, sources = Decimal(0), []
    if count.reported:
        usd += Decimal(repr(count.reported_usd.value))
        sources.append("provider")
    unpriced = count.unreported_prompt_tokens or count.unreported_completion_tokens or \
        count.without_usage
    if not unpriced:
        return Cost(usd, tuple(sources))
    if isinstance(price, NoPrice):
        return Cost(None, tuple(sources), price.reason)
    if count.without_usage and not price.free:
        return Cost(None, tuple(sources),
                    f"{count.without_usage} answers from {who} came without token counts")
    usd += price.cost(count.unreported_prompt_tokens, count.unreported_completion_tokens)
    return Cost(usd, (*sources, price.source))


def run_cost(sessions: Iterable[SessionInfo], model: ModelRef, judge: ModelRef | None,
             given: Price | None, panel: Sequence[ModelRef] = (),
             batch_discount: Decimal | None = None,
             judge_given: Price | None = None) -> dict[str, Any]:
    """counts.cost: {"usd", "source", "unavailable" (when usd is null), "groups"}.
    `given`: the user's prices, for the model under test, `judge_given` for its judge (see
    `role_prices`); `panel`: the benchmark's panel models, in order; `batch_discount`: the
    model's answers came through the provider's batch API (`--batch`), its tokens at that
    share of the price."""
    book = UsageBook.from_sessions(sessions)
    refs = {"model": model, "judge": judge} | {panel_role(k): ref
                                               for k, ref in enumerate(panel, 1)}
    prices = role_prices(model, judge, given, panel, judge_given)
    if batch_discount is not None and isinstance(prices["model"], Price):
        prices["model"] = prices["model"].in_batches(batch_discount)

    def cost(counts: dict[str, UsageCount]) -> Cost:
        out = Cost(Decimal(0))
        for role, count in counts.items():
            ref = refs.get(role)
            out += cost_of(count, prices.get(role, NoPrice(f"unknown role {role}")),
                           ref.label() if ref else role)
        return out

    if sum(book.total(role).requests for role in book.roles) == 0:
        return {"usd": 0.0, "source": NOTHING_SENT, "groups": {}}
    total = cost({role: book.total(role) for role in book.roles})
    per_group = {group: cost({role: counts[group] for role, counts in book.roles.items()
                              if group in counts}) for group in book.groups()}
    return {**as_json(total), "groups": {g: _float(c.usd) for g, c in per_group.items()}}


def role_prices(model: ModelRef, judge: ModelRef | None, given: Price | None,
                panel: Sequence[ModelRef] = (), judge_given: Price | None = None
                ) -> dict[str, Price | NoPrice]:
    """The model's price, its judge's and each panel model's (`panel1`, ...). The user's
    prices are the model's (`given`) and the judge's (`judge_given`: --judge-price-in/out);
    without its own, a judge or panel model gets the model's only when it is the same model
    at the same place, else its table price; no option prices a panel model, so without a
    table price its cost is what its server reports, or unknown (said so, never pointing at
    the model's --price-in). A panel's models are judges (evaluate's judges 2, 3 ...):
    `judge_given` prices them too."""
    prices: dict[str, Price | NoPrice] = {"model": price_for(model, given)}
    if judge is None:
        prices["judge"] = NoPrice("the run's judge model is not known")
    elif judge_given is not None:
        prices["judge"] = judge_given
    else:
        prices["judge"] = _other(judge, "judge", model, given, JUDGE_REMEDY)
    for k, ref in enumerate(panel, 1):  # a panel is of judges: the judges' price is theirs
        prices[panel_role(k)] = judge_given if judge_given is not None else \
            _other(ref, "", model, given, PANEL_REMEDY)
    return prices


def _other(ref: ModelRef, who: str, model: ModelRef, given: Price | None,
           remedy: str) -> Price | NoPrice:
    """A judge's or panel model's price: the user's only for the model under test itself."""
    price = price_for(ref, given if ref == model else None, remedy)
    if isinstance(price, NoPrice):
        return NoPrice(f"{who}: {price.reason}" if who else price.reason, price.remedy)
    return price


def as_json(cost: Cost) -> dict[str, Any]:
    if cost.usd is None:
        return {"usd": None, "source": " + ".join(cost.sources) or "unknown",
                "unavailable": cost.unavailable or "unknown"}
    return {"usd": _float(cost.usd), "source": " + ".join(cost.sources) or NO_USAGE}


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)
