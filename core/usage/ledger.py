"""A session's usage by day and model, with its cost, as facts fold it (pure values; any thread).

Each response's tokens are priced as they are folded (ccusage prices each response apart, and
the rates past 200,000 tokens apply per response), then kept per (local day, model): the rows
``agentbar usage`` adds up per session, project and day.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..records import TOKEN_LIMIT, Usage
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


class Tally:
    """A ledger being added to by one fold (what ``add`` does, for many responses in a row):
    each row's counts are plain integers, capped once at the end, and its costs are summed in
    the order they come. Every response's usage is at least zero, so a row's counts only grow
    and capping them once equals capping each sum (``Usage.__add__``); a negative count, should
    one come, is added the way ``add`` does."""

    def __init__(self, lines: tuple[UsageLine, ...]) -> None:
        self._kept = {(line.day, line.model): line for line in lines}  # rows not added to
        # Rows added to: [input, output, cache read, cache write, 1 h write, cost].
        self._rows: dict[tuple[str, str], list[Any]] = {}

    def add(self, table: PriceTable, *, ts: float | None, model: str | None, usage: Usage) -> None:
        key = (local_day(ts), model or "")
        cost = table.cost(model, usage)
        row = self._rows.get(key)
        if row is None:
            seen = self._kept.pop(key, None)
            if seen is None:
                self._kept[key] = UsageLine(day=key[0], model=key[1], usage=usage, cost=cost)
                return
            row = self._rows[key] = [*counts(seen.usage), seen.cost]
        add_counts(row, usage)
        row[5] = None if cost is None or row[5] is None else row[5] + cost

    def lines(self) -> tuple[UsageLine, ...]:
        """The rows, sorted by (day, model)."""
        rows = dict(self._kept)
        for (day, model), row in self._rows.items():
            rows[(day, model)] = UsageLine(day=day, model=model, usage=capped(row), cost=row[5])
        return tuple(rows[key] for key in sorted(rows))


def counts(usage: Usage) -> list[int]:
    """A usage's counts as a list to add to (``add_counts``; ``capped`` makes it a usage)."""
    return [
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_creation_tokens,
        usage.cache_creation_1h_tokens,
    ]


def add_counts(sums: list[Any], usage: Usage) -> None:
    """Add ``usage`` to the first five of ``sums`` (in place), as ``Usage.__add__`` would to
    ``capped(sums)``: the counts only grow while each is at least zero, so the cap can wait."""
    i, o, r = usage.input_tokens, usage.output_tokens, usage.cache_read_tokens
    c, h = usage.cache_creation_tokens, usage.cache_creation_1h_tokens
    if i < 0 or o < 0 or r < 0 or c < 0 or h < 0:
        sums[:5] = counts(capped(sums) + usage)
        return
    sums[0] += i
    sums[1] += o
    sums[2] += r
    sums[3] += c
    sums[4] += h


def capped(sums: list[Any]) -> Usage:
    """The usage the first five of ``sums`` make, each count capped at ``TOKEN_LIMIT``."""
    return Usage(
        input_tokens=min(sums[0], TOKEN_LIMIT),
        output_tokens=min(sums[1], TOKEN_LIMIT),
        cache_read_tokens=min(sums[2], TOKEN_LIMIT),
        cache_creation_tokens=min(sums[3], TOKEN_LIMIT),
        cache_creation_1h_tokens=min(sums[4], TOKEN_LIMIT),
    )


def total_cost(lines: tuple[UsageLine, ...]) -> float | None:
    """The sum of ``lines``' costs; None when any is unknown."""
    total = 0.0
    for line in lines:
        if line.cost is None:
            return None
        total += line.cost
    return total
