"""What a session is, folded from its records: project, title, model, times, usage (pure).

Usage is de-duplicated the way the agents split it: Claude writes one API response as several
lines sharing ``message.id`` + ``requestId`` with the usage repeated (sometimes growing) on each,
so a key seen again only adds what grew; Codex's adapter turns its running totals into each
response's own counts. Each response is priced as it is folded, under the model its thread
last named, into the session's ledger (``usage.ledger``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .limits import LimitsSeen, LimitWindow
from .records import (
    TITLE_RANK_COMMAND,
    TITLE_RANK_PROMPT,
    Activity,
    AssistantText,
    Bookkeeping,
    Compaction,
    ModelSeen,
    Prompt,
    Record,
    SessionMeta,
    Thinking,
    TitleSet,
    ToolCall,
    ToolResult,
    TurnAborted,
    TurnEnded,
    TurnStarted,
    Unknown,
    Usage,
    UsageReport,
)
from .sources.base import one_line
from .usage import ledger as ledger_mod
from .usage.ledger import UsageLine
from .usage.prices import shipped

RECENT_USAGE_KEYS = 8  # split copies of one response are written back to back
TITLE_CHARS = 120
NO_USAGE = Usage()  # what a repeated copy of a response adds
# Record types whose only fact is their time: skipped after it without the match below, which
# tries each case's class in turn (most records of a history are of these types). Exact types:
# a subclass of any of them still goes through the match. (Each class pattern a record fails
# costs an ``isinstance`` through the Struct metaclass: about 70 ns, 25 for a plain class.)
_TIME_ONLY = frozenset(
    {
        Activity,
        AssistantText,
        Bookkeeping,
        Compaction,
        Thinking,
        ToolCall,
        ToolResult,
        TurnAborted,
        TurnEnded,
        TurnStarted,
        Unknown,
    }
)


@dataclass(frozen=True, slots=True)
class SessionFacts:
    project: str | None = None
    title: str | None = None
    title_rank: int = -1
    model: str | None = None
    cli_version: str | None = None
    forked_from: str | None = None
    started_at: float | None = None
    last_activity: float | None = None
    summed_usage: Usage = field(default_factory=Usage)
    recent_usage: tuple[tuple[str, Usage], ...] = ()
    thread_models: tuple[tuple[str, str], ...] = ()  # (agent id or "", the model it last named)
    ledger: tuple[UsageLine, ...] = ()  # per (day, model), sorted
    limits: tuple[LimitWindow, ...] = ()  # the usage windows this session's agent last named

    @property
    def usage(self) -> Usage:
        return self.summed_usage

    @property
    def cost(self) -> float | None:
        """USD under the shipped price table; None when a model with tokens is unpriced."""
        return ledger_mod.total_cost(self.ledger)


def fold(facts: SessionFacts, record: Record) -> SessionFacts:
    return fold_all(facts, (record,))


def fold_all(facts: SessionFacts, records: Iterable[Record]) -> SessionFacts:
    """``facts`` with ``records`` folded in (a new value; the input is not changed)."""
    draft = _Draft(facts)
    for record in records:
        draft.apply(record)
    return draft.freeze(facts)


class _Draft:
    """A ``SessionFacts`` being edited by one batch of records (frozen once, at the end)."""

    def __init__(self, f: SessionFacts) -> None:
        self.project, self.title, self.title_rank = f.project, f.title, f.title_rank
        self.model, self.cli_version, self.forked_from = f.model, f.cli_version, f.forked_from
        self.started_at, self.last_activity = f.started_at, f.last_activity
        # The usage sum as plain integers, capped once when frozen: every delta a session adds
        # is at least zero, so the sum only grows and capping it once equals capping each step
        # (``Usage.__add__``); a negative delta, should one come, is added as before.
        self.summed = f.summed_usage
        self.sums: list[int] | None = None  # the sum as it grows (``ledger.add_counts``)
        self.recent = list(f.recent_usage)
        self.models = dict(f.thread_models)
        self.ledger = ledger_mod.Tally(f.ledger)
        self.limits = f.limits
        # The ``LimitsSeen`` of this batch, newest last: only the newest with windows counts,
        # so they are read into windows once, at the end (a rollout has one per response).
        self.limits_seen: list[LimitsSeen] = []
        self.changed = False

    def freeze(self, original: SessionFacts) -> SessionFacts:
        if not self.changed:
            return original
        for seen in reversed(self.limits_seen):
            # (What ``self.limits = record.windows() or self.limits`` per record leaves.)
            windows = seen.windows()
            if windows:
                self.limits = windows
                break
        return SessionFacts(
            project=self.project,
            title=self.title,
            title_rank=self.title_rank,
            model=self.model,
            cli_version=self.cli_version,
            forked_from=self.forked_from,
            started_at=self.started_at,
            last_activity=self.last_activity,
            summed_usage=self.summed if self.sums is None else ledger_mod.capped(self.sums),
            recent_usage=tuple(self.recent),
            thread_models=tuple(sorted(self.models.items())),
            ledger=self.ledger.lines(),
            limits=self.limits,
        )

    def apply(self, record: Record) -> None:
        ts = record.ts
        if ts is not None and (self.last_activity is None or ts > self.last_activity):
            self.last_activity = ts
            if self.started_at is None:
                self.started_at = ts
            self.changed = True
        if type(record) in _TIME_ONLY:
            return
        main = record.agent_id is None
        match record:  # the commonest first (no record class subclasses another)
            case UsageReport(usage=usage, key=key):
                self._add_split_usage(record, usage, key)
            case LimitsSeen():
                self.limits_seen.append(record)
            case SessionMeta(cwd=cwd, cli_version=version, forked_from=forked) if main:
                self.project = self.project or cwd
                self.cli_version = version or self.cli_version
                self.forked_from = self.forked_from or forked
            case Prompt(text=text) if main and self.title_rank < TITLE_RANK_PROMPT:
                self.title, self.title_rank = one_line(text, TITLE_CHARS), TITLE_RANK_PROMPT
            case TitleSet(title=title, rank=rank) if main and _retitles(
                rank, self.title_rank, self.title
            ):
                self.title, self.title_rank = one_line(title, TITLE_CHARS), rank
            case ModelSeen(model=model):
                self.models[record.agent_id or ""] = model
                if main:
                    self.model = model
            case _:
                return
        self.changed = True

    def _add_split_usage(self, record: Record, usage: Usage, key: str | None) -> None:
        delta = split_usage_delta(self.recent, usage, key)
        if delta is not NO_USAGE:
            if self.sums is None:
                self.sums = ledger_mod.counts(self.summed)
            ledger_mod.add_counts(self.sums, delta)
            model = self.models.get(record.agent_id or "") or self.models.get("")
            self.ledger.add(shipped(), ts=record.ts, model=model, usage=delta)


def _retitles(rank: int, current: int, title: str | None) -> bool:
    """Whether a title of ``rank`` replaces the current one: a higher rank does, the same rank
    does too (the latest name wins), except slash commands (the first one names the session)."""
    if rank == current == TITLE_RANK_COMMAND:
        return not title
    return rank >= current


def split_usage_delta(recent: list[tuple[str, Usage]], usage: Usage, key: str | None) -> Usage:
    """What one response's usage adds to a sum, given the keys seen last (updated in place): a
    split copy of a response already counted adds only what grew, an exact repeat nothing."""
    if key is None:
        return usage
    for index, (seen_key, seen) in enumerate(recent):
        if seen_key == key:
            if usage != seen and usage.covers(seen):
                recent[index] = (key, usage)
                return usage - seen
            return NO_USAGE
    recent.append((key, usage))
    if len(recent) > RECENT_USAGE_KEYS:
        del recent[0]
    return usage
