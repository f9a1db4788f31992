"""The search route's filters from its query parameters: the time of the line and the project
(as the session list names it), checked and turned into what ``Searcher.search`` takes (pure;
server thread)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..listing import SessionFilter, parse_since
from ..model import LOCAL_HOST, SessionKey, SessionSnapshot
from .replies import BadRequest


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchFilters:
    """``since``: epoch seconds a line must be written at or after; ``sessions``: the sessions
    of the project asked for (None: any session)."""

    since: float | None = None
    sessions: frozenset[SessionKey] | None = None


def search_filters(
    query: Mapping[str, str], sessions: Iterable[SessionSnapshot], *, now: float
) -> SearchFilters:
    """``?since=2h|today|2026-11-30`` and ``?project=NAME|PATH`` (the session list's rules)."""
    since = None
    raw_since = query.get("since", "").strip()
    if raw_since:
        try:
            since = parse_since(raw_since, now=now)
        except ValueError as exc:
            raise BadRequest(f"since: {exc}") from None
    keys = None
    project = query.get("project", "").strip()
    if project:
        wanted = SessionFilter(project=project)
        # The index knows this machine's sessions only: a remote's are not searched.
        keys = frozenset(s.key for s in sessions if s.key.host == LOCAL_HOST and wanted.matches(s))
    return SearchFilters(since=since, sessions=keys)
