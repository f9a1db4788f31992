"""``agentbar usage``'s totals: ledgers summed per session, project and day (pure; any thread).

Filters apply to the ledger's lines: ``since`` keeps the days from that date on (a session
that spans it counts only its later days), ``project`` the sessions whose folder path holds
that text, ``agent`` one agent's. A cost is None (unknown) when any line under it is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import SessionSnapshot, iso
from ..records import Usage
from .ledger import UsageLine
from .prices import shipped


@dataclass(frozen=True, slots=True, kw_only=True)
class Filters:
    since: str | None = None  # YYYY-MM-DD
    project: str | None = None
    agent: str | None = None


def filters(since: object = None, project: object = None, agent: object = None) -> Filters:
    """The report's filters from its options as given (the command's, or a channel call's:
    each as text when given); a ``since`` that is no date raises ``ValueError``."""
    return Filters(
        since=None if since is None else parse_day(str(since)),
        project=None if project is None else str(project),
        agent=None if agent is None else str(agent),
    )


def parse_day(text: str) -> str:
    """``text`` (YYYY-MM-DD or YYYYMMDD) as YYYY-MM-DD; raises ``ValueError`` when no date."""
    for shape in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return dt.datetime.strptime(text, shape).date().isoformat()
        except ValueError:
            continue
    raise ValueError(f"not a date (YYYY-MM-DD or YYYYMMDD): {text!r}")


@dataclass(slots=True)
class Total:
    """Tokens and cost summed; ``cost`` None once any part was unpriced."""

    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    sessions: int = 0

    def add(self, lines: Iterable[UsageLine]) -> None:
        for line in lines:
            self.usage = self.usage + line.usage
            self.cost = None if self.cost is None or line.cost is None else self.cost + line.cost

    def to_json(self) -> dict[str, Any]:
        u = self.usage
        return {
            **u.to_json(),
            "total_tokens": u.input_tokens
            + u.output_tokens
            + u.cache_read_tokens
            + u.cache_creation_tokens,
            "cost_usd": self.cost,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRow:
    snapshot: SessionSnapshot
    lines: tuple[UsageLine, ...]
    total: Total


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    sessions: list[SessionRow]
    projects: dict[str, Total]  # "" for sessions with no known folder
    days: dict[str, Total]
    total: Total


def build(snapshots: Sequence[SessionSnapshot], filters: Filters) -> Report:
    rows: list[SessionRow] = []
    projects: dict[str, Total] = {}
    days: dict[str, Total] = {}
    grand = Total()
    for snap in snapshots:
        if filters.agent is not None and str(snap.key.agent) != filters.agent:
            continue
        if filters.project is not None and filters.project not in (snap.project or ""):
            continue
        lines = tuple(
            line for line in snap.ledger if filters.since is None or line.day >= filters.since
        )
        if not lines:
            continue
        total = Total(sessions=1)
        total.add(lines)
        rows.append(SessionRow(snapshot=snap, lines=lines, total=total))
        project = projects.setdefault(snap.project or "", Total())
        project.add(lines)
        project.sessions += 1
        for day in sorted({line.day for line in lines}):
            bucket = days.setdefault(day, Total())
            bucket.add(line for line in lines if line.day == day)
            bucket.sessions += 1
        grand.add(lines)
        grand.sessions += 1
    # Ties in a stable order of their own (not the order the sessions came in): the same
    # history reads the same wherever it is reported (``agentbar usage --host``).
    rows.sort(key=lambda r: (-(r.snapshot.last_activity or 0.0), str(r.snapshot.key)))
    return Report(
        sessions=rows,
        projects=dict(sorted(projects.items(), key=lambda kv: (-(kv[1].cost or 0.0), kv[0]))),
        days=dict(sorted(days.items())),
        total=grand,
    )


def document(snapshots: Sequence[SessionSnapshot], filters: Filters) -> dict[str, Any]:
    """The report as ``agentbar usage --json`` prints it, with the shipped prices: what the
    tables are printed from, here or for a remote host (its agentbar answers this)."""
    table = shipped()
    return to_json(build(snapshots, filters), source=table.source, date=table.date)


def to_json(report: Report, *, source: str, date: str) -> dict[str, Any]:
    return {
        "prices": {"source": source, "date": date},
        "days": [
            {"day": d or None, "sessions": t.sessions, **t.to_json()}
            for d, t in report.days.items()
        ],
        "projects": [
            {"project": p or None, "sessions": t.sessions, **t.to_json()}
            for p, t in report.projects.items()
        ],
        "sessions": [
            {
                "agent": str(r.snapshot.key.agent),
                "session_id": r.snapshot.key.session_id,
                "project": r.snapshot.project,
                "title": r.snapshot.title,
                "last_activity": iso(r.snapshot.last_activity),
                "models": sorted({line.model for line in r.lines if line.model}),
                **r.total.to_json(),
            }
            for r in report.sessions
        ],
        "totals": {"sessions": report.total.sessions, **report.total.to_json()},
    }
