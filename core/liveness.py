"""Which running agent process is which session (pure; any thread).

Claude's registry names its pid outright; everything else is matched here. A process whose
command line names a session (``--resume <id>``) gets it. Otherwise a process gets a session of
its agent in the same folder that was written to after the process started: preferably the one
that began right after it (a new session), else the most recently active (a resumed one).
"Someone holds the file open" is deliberately not used: Codex's app-server daemon keeps rollouts
open long after the TUI that wrote them has exited.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from .model import SessionKey
from .sources.base import ProcessInfo

START_SLACK_SECONDS = 5.0  # clocks and startup: a session's first line can predate its process


@dataclass(frozen=True, slots=True)
class Client:
    """An agent client process, as its adapter reads it."""

    proc: ProcessInfo
    cwd: str | None
    session_hint: str | None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session that could belong to a running process."""

    key: SessionKey
    cwd: str | None
    started_at: float | None
    last_activity: float | None


def without_wrappers(clients: Iterable[Client]) -> list[Client]:
    """Drop launcher processes whose child is also a client (``node codex.js`` starts the
    native ``codex`` binary: one agent, two processes)."""
    clients = list(clients)
    parents = {c.proc.ppid for c in clients}
    return [c for c in clients if c.proc.pid not in parents]


def match(clients: Iterable[Client], sessions: Iterable[Candidate]) -> dict[SessionKey, Client]:
    pool = {s.key: s for s in sessions}
    by_id = {s.key.session_id: s.key for s in pool.values()}
    bound: dict[SessionKey, Client] = {}
    rest: list[Client] = []
    for client in sorted(clients, key=lambda c: c.proc.create_time):
        hinted = by_id.get(client.session_hint or "")
        if hinted is not None and hinted in pool:
            bound[hinted] = client
            del pool[hinted]
        else:
            rest.append(client)
    for client in rest:
        best = _best_session(client, pool.values())
        if best is not None:
            bound[best.key] = client
            del pool[best.key]
    return bound


def _best_session(client: Client, sessions: Iterable[Candidate]) -> Candidate | None:
    born = client.proc.create_time - START_SLACK_SECONDS
    best: tuple[tuple[int, float], Candidate] | None = None
    for session in sessions:
        if session.last_activity is None or session.last_activity < born:
            continue
        if not _same_folder(client.cwd, session.cwd):
            continue
        if session.started_at is not None and session.started_at >= born:
            score = (0, session.started_at - born)  # began under this process: a new session
        else:
            score = (1, -session.last_activity)  # older but written since: a resumed session
        if best is None or score < best[0]:
            best = (score, session)
    return None if best is None else best[1]


def _same_folder(process_cwd: str | None, session_cwd: str | None) -> bool:
    if process_cwd is None:
        return True  # the OS would not tell us (another user's process): do not exclude it
    if session_cwd is None:
        return False
    if os.path.normpath(process_cwd) == os.path.normpath(session_cwd):
        return True
    try:
        return os.path.realpath(process_cwd) == os.path.realpath(session_cwd)
    except OSError:
        return False
