"""The folders a person launches agents in: the recent ones, from the sessions the engine knows
and the tasks of this run (pure; any thread). For the tray's "Launch in" menu and the window's
launch form; pinned folders are the tray's own preference, merged in by ``menu_projects``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ..model import SessionSnapshot
from .task import TaskInfo

RECENT_LIMIT = 8


def recent_projects(
    sessions: Iterable[SessionSnapshot],
    tasks: Iterable[TaskInfo] = (),
    *,
    limit: int = RECENT_LIMIT,
    exists: bool = True,
) -> list[str]:
    """Distinct project folders, most recently active first (a session's last activity, a
    task's start); with ``exists``, only folders that are still there."""
    latest: dict[str, float] = {}
    for snap in sessions:
        if snap.project:
            when = snap.last_activity or snap.started_at or 0.0
            latest[snap.project] = max(latest.get(snap.project, 0.0), when)
    for task in tasks:
        latest[task.project] = max(latest.get(task.project, 0.0), task.started_at)
    ordered = sorted(latest, key=lambda folder: (-latest[folder], folder))
    found = []
    for folder in ordered:
        if exists and not os.path.isdir(folder):
            continue
        found.append(folder)
        if len(found) >= limit:
            break
    return found


def menu_projects(pinned: Sequence[str], recent: Sequence[str]) -> list[tuple[str, bool]]:
    """The menu's folders: pinned ones first (in the person's order), then the recent ones not
    pinned; each with whether it is pinned."""
    seen = set(pinned)
    return [(p, True) for p in pinned] + [(r, False) for r in recent if r not in seen]
