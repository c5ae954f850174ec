"""The run's cost on its report page, as run.json's `counts.cost` says it: a card with the
total, and a note (where it comes from, or why it is unknown) with a table per group when
there are several groups."""

from __future__ import annotations

from visioneval.core.blocks import Note, Table
from visioneval.core.runfiles import CostInfo, RunInfo
from visioneval.cost.money import usd
from visioneval.cost.usage import UsageBook


def cost_card(info: RunInfo) -> tuple[str, str]:
    cost = info.counts.cost if info.counts else None
    if cost is None:
        return ("cost", "-")
    return ("cost", usd(cost.usd))


def cost_column(infos: list[RunInfo], names: list[str], whole_runs_only: bool = False
                ) -> tuple[list[str], list[str]]:
    """The Cost column of `visioneval compare`: each row's run cost (run.json's
    `counts.cost`, every session), "unknown" when it is; and the notes under the table (what
    the column is, why a cost is unknown, by the row's name)."""
    cells, reasons = [], {}
    for info, name in zip(infos, names, strict=True):
        cost = info.counts.cost if info.counts else None
        value = cost.usd if cost is not None else None
        cells.append(usd(value))
        if value is None:
            reasons[name] = cost.unavailable if cost is not None else \
                "the run recorded no cost (made before visioneval counted it)"
    notes = ["Cost: what each run spent, in US dollars, over all its sessions (run.json "
             "counts.cost); answers from the cache cost nothing."
             + (" It is the whole run's, not only the common samples'." if whole_runs_only
                else "")]
    notes += [f"Cost unknown for {name}: {why or 'no reason recorded'}."
              for name, why in reasons.items()]
    return cells, notes


def cost_blocks(info: RunInfo) -> list[Table | Note]:
    """Where the cost comes from (or why it is unknown), and the cost per group with its
    requests and tokens (every session's usage added up)."""
    counts = info.counts
    cost = counts.cost if counts is not None else None
    if counts is None or cost is None:
        return []
    cached = counts.cache_hits
    free = f" {cached} answers came from the cache and cost nothing." if cached else ""
    if cost.usd is None:
        text = f"Cost unknown: {cost.unavailable or 'no reason recorded'}.{free}"
    else:
        text = f"Cost {usd(cost.usd)}, from {cost.source}, over all sessions.{free}"
    blocks: list[Table | Note] = [Note(text)]
    groups = cost.groups or {}
    if len(groups) > 1:
        book = UsageBook.from_sessions(info.sessions)
        rows = []
        for group, value in groups.items():
            counted = [c for role in book.roles.values() if (c := role.get(group))]
            rows.append([group, sum(c.requests for c in counted),
                         sum(c.prompt_tokens for c in counted),
                         sum(c.completion_tokens for c in counted), usd(value)])
        blocks.append(Table(["group", "requests sent", "tokens in", "tokens out", "cost"],
                            rows))
    return blocks


def cost_line(cost: CostInfo | None, cache_hits: int = 0) -> str:
    """The run's cost as run.json says it (all sessions): dollars and where they come from,
    or why it is unknown; per group when there are several; cached answers are free."""
    cached = (f"; {cache_hits} answers from the cache cost nothing this session"
              if cache_hits else "")
    if cost is None:
        return "cost: not recorded"
    if cost.usd is None:
        return f"cost: unknown ({cost.unavailable or 'no reason recorded'}){cached}"
    groups = cost.groups or {}
    per = ("; per group: " + ", ".join(f"{g} {usd(v)}" for g, v in groups.items())
           if len(groups) > 1 else "")
    return f"cost: {usd(cost.usd)} ({cost.source}){per}{cached}"
