"""A session's usage by day and model, with its cost, as facts fold it (pure values; any thread).

Each response's tokens are priced as they are folded (ccusage prices each response apart, and
the rates past 200,000 tokens apply per response), then kept per (local day, model): the rows
``agentbar usage`` adds up per session, project and day.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..records import Usage
from .prices import PriceTable


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageLine:
    """Tokens one session spent on one day with one model; ``cost`` None when unpriced."""

    day: str  # YYYY-MM-DD in local time; "" when the lines carried no usable time
    model: str  # "" when no model was named before the usage
    usage: Usage
    cost: float | None


def local_day(ts: float | None) -> str:
    if ts is None:
        return ""
    try:
        return time.strftime("%Y-%m-%d", time.localtime(ts))
    except (OverflowError, OSError, ValueError):
        return ""


def add(
    lines: dict[tuple[str, str], UsageLine],
    table: PriceTable,
    *,
    ts: float | None,
    model: str | None,
    usage: Usage,
) -> None:
    """Count one response's ``usage`` into ``lines`` (updated in place)."""
    day, name = local_day(ts), model or ""
    cost = table.cost(model, usage)
    seen = lines.get((day, name))
    if seen is not None:
        usage = seen.usage + usage
        cost = None if cost is None or seen.cost is None else seen.cost + cost
    lines[(day, name)] = UsageLine(day=day, model=name, usage=usage, cost=cost)


def total_cost(lines: tuple[UsageLine, ...]) -> float | None:
    """The sum of ``lines``' costs; None when any is unknown."""
    total = 0.0
    for line in lines:
        if line.cost is None:
            return None
        total += line.cost
    return total
