"""`--max-cost`: what a session has spent so far, and whether it may send another request.

Each answer is charged as it arrives: the provider's reported cost, else its tokens at the
role's price; an answer that reports neither is charged its estimate (prompt by the dry
run's rule, and the whole `max_tokens`), so a silent server cannot run past the limit.
Requests already in flight when the limit is reached still finish and are recorded, so a
session may end a little above the limit (at most the requests in flight at that moment)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from visioneval.core.records import Request, Response
from visioneval.cost.estimate import request_tokens
from visioneval.cost.images import image_rule
from visioneval.cost.money import usd
from visioneval.cost.prices import ModelRef, NoPrice, Price
from visioneval.cost.total import role_prices
from visioneval.cost.usage import panel_role


@dataclass
class Budget:
    limit: Decimal
    prices: dict[str, Price]  # per role: "model", and "judge", "panelK" when the run has them
    models: dict[str, str] = field(default_factory=dict)  # per role: the model's name
    spent: Decimal = Decimal(0)
    answers: int = 0

    @classmethod
    def for_run(cls, limit: float, model: ModelRef, judge: ModelRef | None,
                given: Price | None, panel: Sequence[ModelRef] = (),
                judge_given: Price | None = None) -> Budget:
        """The session's budget; a ValueError (one line) when a price is unknown (the
        model's, its judge's or a panel model's)."""
        refs = {"model": model, **({"judge": judge} if judge is not None else {})} | \
            {panel_role(k): ref for k, ref in enumerate(panel, 1)}
        prices = {}
        for role, price in role_prices(model, judge, given, panel, judge_given).items():
            if role not in refs:
                continue
            if isinstance(price, NoPrice):
                raise ValueError("--max-cost needs a price, and there is none: "
                                 f"{price.line()}")
            prices[role] = price
        return cls(Decimal(str(limit)), prices, {r: ref.model for r, ref in refs.items()})

    def exhausted(self) -> bool:
        return self.spent >= self.limit

    def charge(self, role: str, request: Request, response: Response) -> None:
        self.answers += 1
        if response.cost_usd is not None:
            self.spent += Decimal(repr(response.cost_usd))
            return
        price = self.prices.get(role) or self.prices["model"]
        if response.prompt_tokens is None and response.completion_tokens is None:
            if response.ok:  # no usage in the reply: charged its estimate, all of max_tokens
                prompt = request_tokens(request, image_rule(self.models.get(role, "")))
                self.spent += price.cost(prompt.total, request.settings.max_tokens)
            return
        self.spent += price.cost(response.prompt_tokens or 0, response.completion_tokens or 0)

    def line(self) -> str:
        return (f"--max-cost {usd(float(self.limit))} reached: {usd(float(self.spent))} spent "
                f"this session ({self.answers} answers)")
