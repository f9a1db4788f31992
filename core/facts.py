"""What a session is, folded from its records: project, title, model, times, usage (pure).

Usage is de-duplicated the way the agents split it: Claude writes one API response as several
lines sharing ``message.id`` + ``requestId`` with the usage repeated (sometimes growing) on each,
so a key seen again only adds what grew; Codex reports running totals per thread, so the last
total of each thread counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agentbar.core.records import (
    TITLE_RANK_PROMPT,
    ModelSeen,
    Prompt,
    Record,
    SessionMeta,
    TitleSet,
    Usage,
    UsageReport,
)
from agentbar.core.sources.base import one_line

RECENT_USAGE_KEYS = 32  # split copies of one response are written back to back
TITLE_CHARS = 120


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
    thread_totals: tuple[tuple[str, Usage], ...] = ()  # (agent id or "", running total)

    @property
    def usage(self) -> Usage:
        total = self.summed_usage
        for _, thread_total in self.thread_totals:
            total = total + thread_total
        return total


def fold(facts: SessionFacts, record: Record) -> SessionFacts:
    ts = record.ts
    if ts is not None and (facts.last_activity is None or ts > facts.last_activity):
        facts = replace(
            facts,
            last_activity=ts,
            started_at=facts.started_at if facts.started_at is not None else ts,
        )
    main = record.agent_id is None
    match record:
        case SessionMeta(cwd=cwd, cli_version=version, forked_from=forked) if main:
            return replace(
                facts,
                project=facts.project or cwd,
                cli_version=version or facts.cli_version,
                forked_from=facts.forked_from or forked,
            )
        case Prompt(text=text) if main and facts.title_rank < TITLE_RANK_PROMPT:
            return replace(facts, title=one_line(text, TITLE_CHARS), title_rank=TITLE_RANK_PROMPT)
        case TitleSet(title=title, rank=rank) if main and rank >= facts.title_rank:
            return replace(facts, title=one_line(title, TITLE_CHARS), title_rank=rank)
        case ModelSeen(model=model) if main:
            return replace(facts, model=model)
        case UsageReport(usage=usage, cumulative=True):
            thread = record.agent_id or ""
            totals = dict(facts.thread_totals)
            totals[thread] = usage
            return replace(facts, thread_totals=tuple(sorted(totals.items())))
        case UsageReport(usage=usage, key=key):
            return _add_split_usage(facts, usage, key)
    return facts


def _add_split_usage(facts: SessionFacts, usage: Usage, key: str | None) -> SessionFacts:
    if key is None:
        return replace(facts, summed_usage=facts.summed_usage + usage)
    for seen_key, seen in facts.recent_usage:
        if seen_key == key:
            if usage == seen or not usage.covers(seen):
                return facts
            recent = tuple((k, usage if k == key else u) for k, u in facts.recent_usage)
            return replace(
                facts, summed_usage=facts.summed_usage + (usage - seen), recent_usage=recent
            )
    recent = (*facts.recent_usage[-(RECENT_USAGE_KEYS - 1) :], (key, usage))
    return replace(facts, summed_usage=facts.summed_usage + usage, recent_usage=recent)
