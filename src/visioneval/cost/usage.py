"""What a session's requests used, by who answered (the model, its judge, a panel model)
and by record group (a config, a subset): tokens, and the cost the provider reported where it did.

Only answers from the server count: a cached answer cost nothing this session. A failed
request with no usage in its reply is taken as free (servers do not bill a refused or failed
request; one that timed out on our side may have been billed, and no reply says so)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from visioneval.core.records import Response
from visioneval.stats.exactsum import ExactSum

if TYPE_CHECKING:
    from visioneval.core.runfiles import SessionInfo, UsageCountInfo

ROLES = ("model", "judge")
"""The roles every run may have; a run with panel models adds one per position
(`panel_role`). A session's usage is read by whatever roles it holds, so a run.json written
before panel models existed reads as it did."""
PANEL_ROLE = "panel"


def panel_role(position: int) -> str:
    """The usage role of the benchmark's k-th panel model (1-based): panel1, panel2, ..."""
    return f"{PANEL_ROLE}{position}"


@dataclass
class UsageCount:
    """One role's and group's requests; sums over sessions add these up field by field."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported: int = 0  # answers that carried the provider's cost
    reported_usd: ExactSum = field(default_factory=ExactSum)
    unreported_prompt_tokens: int = 0  # tokens of answers without it: priced by us
    unreported_completion_tokens: int = 0
    without_usage: int = 0  # answers that said neither tokens nor cost

    def add(self, response: Response) -> None:
        self.requests += 1
        prompt, completion = response.prompt_tokens or 0, response.completion_tokens or 0
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if response.cost_usd is not None:
            self.reported += 1
            self.reported_usd.add(response.cost_usd)
            return
        self.unreported_prompt_tokens += prompt
        self.unreported_completion_tokens += completion
        if response.ok and response.prompt_tokens is None and \
                response.completion_tokens is None:
            self.without_usage += 1

    def merge(self, other: UsageCount) -> None:
        for name in _INTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.reported_usd.add(other.reported_usd.value)

    def as_dict(self) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in _INTS},
                "reported_usd": self.reported_usd.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UsageCount:
        count = cls()
        for name in _INTS:
            setattr(count, name, int(data.get(name) or 0))
        count.reported_usd.add(float(data.get("reported_usd") or 0.0))
        return count


_INTS = ("requests", "prompt_tokens", "completion_tokens", "reported",
         "unreported_prompt_tokens", "unreported_completion_tokens", "without_usage")


@dataclass
class UsageBook:
    """Usage per role and group: run.json keeps it in each session as
    {"model": {"<group>": {...}}, "judge": {...}, "panel1": {...}} (roles without requests
    left out)."""

    roles: dict[str, dict[str, UsageCount]] = field(default_factory=dict)

    def add(self, role: str, group: str, response: Response) -> None:
        groups = self.roles.setdefault(role, {})
        count = groups.get(group)
        if count is None:
            count = groups[group] = UsageCount()
        count.add(response)

    def merge(self, other: UsageBook) -> None:
        for role, groups in other.roles.items():
            mine = self.roles.setdefault(role, {})
            for group, count in groups.items():
                mine.setdefault(group, UsageCount()).merge(count)

    def total(self, role: str) -> UsageCount:
        out = UsageCount()
        for count in self.roles.get(role, {}).values():
            out.merge(count)
        return out

    def groups(self) -> list[str]:
        return list(dict.fromkeys(g for groups in self.roles.values() for g in groups))

    def as_dict(self) -> dict[str, Any]:
        return {role: {group: count.as_dict() for group, count in groups.items()}
                for role, groups in self.roles.items()}

    @classmethod
    def from_sessions(cls, sessions: Iterable[SessionInfo]) -> UsageBook:
        """Every session's usage added up (a resumed run's sessions, a merged run's shards)."""
        book = cls()
        for session in sessions:
            if session.usage is not None:
                book.merge(cls(roles={role: {group: _recorded(count)
                                             for group, count in groups.items()}
                                      for role, groups in session.usage.items()}))
            elif session.sent:  # a session of a visioneval that kept totals only
                book.merge(cls(roles={"model": {UNRECORDED: _legacy(session)}}))
        return book


UNRECORDED = "(not recorded per group)"


def _recorded(info: UsageCountInfo) -> UsageCount:
    return UsageCount.from_dict(info.model_dump())


def _legacy(session: SessionInfo) -> UsageCount:
    """An older session's totals: its tokens, none reported with a cost."""
    prompt, completion = session.prompt_tokens, session.completion_tokens
    return UsageCount(requests=session.sent, prompt_tokens=prompt,
                      completion_tokens=completion, unreported_prompt_tokens=prompt,
                      unreported_completion_tokens=completion)
