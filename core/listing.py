"""Which sessions a listing shows and in what order, and the engine's skipped-input counts:
shared by ``agentbar status`` and the server's session list (pure; any thread)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .engine_messages import EngineStats
from .model import SessionSnapshot, State
from .text import home_folder

RECENT_SECONDS = 24 * 3600
STATE_ORDER = {
    State.INPUT_REQUIRED: 0,
    State.FAILED: 1,
    State.RUNNING: 2,
    State.DONE: 3,
    State.ENDED: 4,
}


def select(
    snapshots: Sequence[SessionSnapshot], *, now: float, show_all: bool
) -> list[SessionSnapshot]:
    """Live and recent sessions (or all), those that need you first, newest first."""
    chosen = [
        s
        for s in snapshots
        if show_all
        or s.state.state is not State.ENDED
        or (s.last_activity or 0.0) >= now - RECENT_SECONDS
    ]
    chosen.sort(key=lambda s: -(s.last_activity or 0.0))
    chosen.sort(key=lambda s: STATE_ORDER[s.state.state])
    return chosen


def first_rows(
    rows: Sequence[SessionSnapshot], recent: int
) -> tuple[list[SessionSnapshot], list[SessionSnapshot]]:
    """``rows`` in two parts, each in ``rows``' order: those that need you or run and the
    ``recent`` newest of the others (what the board draws first: a page of its sections), then
    the rest."""
    live = (State.INPUT_REQUIRED, State.RUNNING)
    others = [s for s in rows if s.state.state not in live]
    newest = {id(s) for s in sorted(others, key=lambda s: -(s.last_activity or 0.0))[:recent]}
    first = [s for s in rows if s.state.state in live or id(s) in newest]
    return first, [s for s in others if id(s) not in newest]


# The names a person may give a state by, beside the wire names.
STATE_ALIASES = {
    "needs-you": State.INPUT_REQUIRED,
    "needs_you": State.INPUT_REQUIRED,
    "waiting": State.INPUT_REQUIRED,
    "input-required": State.INPUT_REQUIRED,
    "finished": State.DONE,
}
_SPAN = re.compile(r"(\d{1,6})\s*([smhdw])")
_SPAN_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionFilter:
    """Which sessions a listing keeps (``status --project/--agent/--state/--since/--host``,
    the same query parameters on ``GET /api/sessions``): every field given must match; None
    matches everything. ``project`` matches the folder's own name exactly or any part of its
    path; ``since`` is epoch seconds of the last activity."""

    project: str | None = None
    agent: str | None = None
    states: frozenset[State] | None = None
    since: float | None = None
    host: str | None = None

    def matches(self, snap: SessionSnapshot) -> bool:
        return (
            (self.agent is None or str(snap.key.agent) == self.agent)
            and (self.host is None or snap.key.host == self.host)
            and (self.states is None or snap.state.state in self.states)
            and (self.since is None or (snap.last_activity or 0.0) >= self.since)
            and (self.project is None or _project_matches(snap.project, self.project))
        )

    def apply(self, snapshots: Sequence[SessionSnapshot]) -> list[SessionSnapshot]:
        return [s for s in snapshots if self.matches(s)]


def _project_matches(project: str | None, wanted: str) -> bool:
    if not project:
        return False
    if wanted == "~" or wanted.startswith("~/"):  # as status writes it (an API client may too)
        wanted = (home_folder() or "~") + wanted[1:]
    wanted = wanted.rstrip("/") or "/"
    name = project.rstrip("/").rsplit("/", 1)[-1]
    return name == wanted or wanted in project


def parse_states(text: str) -> frozenset[State]:
    """``"running,needs-you"`` as states; ValueError names the ones it knows."""
    states: set[State] = set()
    for raw in text.split(","):
        word = raw.strip().lower()
        if not word:
            continue
        state = STATE_ALIASES.get(word)
        if state is None:
            try:
                state = State(word.replace("-", "_"))
            except ValueError:
                known = ", ".join([*(s.value for s in State), *STATE_ALIASES])
                raise ValueError(f"unknown state {raw.strip()!r} (one of: {known})") from None
        states.add(state)
    if not states:
        raise ValueError("no state given")
    return frozenset(states)


def parse_limit(text: str) -> int:
    """A page size: a whole number from 1 on; ValueError says so."""
    try:
        limit = int(text.strip())
    except ValueError:
        raise ValueError(f"limit must be a whole number, not {text!r}") from None
    if limit < 1:
        raise ValueError(f"limit must be 1 or more, not {limit}")
    return limit


@dataclass(frozen=True, slots=True)
class Listing:
    """What a listing shows: ``rows`` (at most ``limit`` from ``offset``) of the ``total``
    that matched, and how many more matched but were hidden as older ended sessions (``--all``
    or ``all=1`` shows those; 0 when they were asked for)."""

    rows: list[SessionSnapshot]
    total: int
    hidden_old: int


def listing(
    snapshots: Sequence[SessionSnapshot],
    *,
    now: float,
    show_all: bool,
    where: SessionFilter | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> Listing:
    """The sessions ``agentbar status`` and ``GET /api/sessions`` show: those matching ``where``,
    live and recent ones unless ``show_all`` or the filter names states or a time (then it
    says which), in ``select``'s order, then a page of them."""
    where = where or SessionFilter()
    wanted = where.apply(snapshots)
    every = show_all or where.states is not None or where.since is not None
    chosen = select(wanted, now=now, show_all=every)
    end = None if limit is None else offset + limit
    return Listing(rows=chosen[offset:end], total=len(chosen), hidden_old=len(wanted) - len(chosen))


def title_or_fallback(snap: SessionSnapshot) -> str:
    """A session's title for people, never blank: its own, else its folder's name in
    parentheses (a stand-in, not a title), else "(untitled)"."""
    if snap.title and snap.title.strip():
        return snap.title
    name = (snap.project or "").rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    return f"({name})" if name else "(untitled)"


def parse_since(text: str, *, now: float) -> float:
    """A moment as epoch seconds: a span back from ``now`` (``30m``, ``2h``, ``3d``, ``1w``),
    ``today``/``yesterday`` (local midnight) or a date or time in ISO 8601 (local time unless
    it names a zone). ValueError says what it accepts."""
    word = text.strip().lower()
    span = _SPAN.fullmatch(word)
    if span:
        return now - int(span.group(1)) * _SPAN_SECONDS[span.group(2)]
    if word in ("today", "yesterday"):
        midnight = _dt.datetime.fromtimestamp(now).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        if word == "yesterday":
            midnight -= _dt.timedelta(days=1)
        return midnight.timestamp()
    try:
        moment = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a time: give a span (30m, 2h, 3d, 1w), today, "
            "yesterday or a date (2026-11-30, 2026-11-30T14:00)"
        ) from None
    return moment.timestamp()


def diagnostics(stats: EngineStats) -> dict[str, int]:
    """The engine's counts of odd input, by the names the API and ``status --json`` use."""
    return {
        "malformed_lines": stats.malformed,
        "oversized_lines": stats.oversized,
        "unknown_records": stats.unknown,
        "unrepresentable_timestamps": stats.odd_times,
        "clamped_numbers": stats.clamped,
        "unreadable_files": stats.unreadable,
        "ignored_files": stats.ignored_files,
    }


# What was done with each kind of odd input, in words ("1 malformed line skipped"): each
# count's noun in the singular and the plural, and what became of it.
_NOTES = {
    "malformed_lines": ("malformed line", "malformed lines", "skipped"),
    "oversized_lines": ("over-long line", "over-long lines", "kept in part"),
    "unknown_records": (
        "record of unknown type",
        "records of unknown type",
        "kept as-is, shown raw in the replay",
    ),
    "unrepresentable_timestamps": ("impossible timestamp", "impossible timestamps", "read as none"),
    "clamped_numbers": ("out-of-range number", "out-of-range numbers", "clamped"),
    "unreadable_files": ("unreadable file", "unreadable files", "skipped"),
    "ignored_files": (
        "transcript naming no session",
        "transcripts naming no session",
        "ignored",
    ),
}


def input_notes(counts: dict[str, int]) -> str:
    """``diagnostics``' counts as what became of the input: "17 records of unknown type kept
    as-is, shown raw in the replay; 1 malformed line skipped"; "" when all are 0."""
    said = []
    for name, count in counts.items():
        if count and name in _NOTES:
            one, many, fate = _NOTES[name]
            said.append(f"{count} {one if count == 1 else many} {fate}")
    return "; ".join(said)
