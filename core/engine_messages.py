"""The engine's vocabulary: the messages other threads put in its inbox, its counters and the
faults it reports (plain frozen values; made on any thread, read on any thread).

The watcher, the ticker and the task manager import these, not the engine: they only post.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import Fault
from .model import Process, SessionKey


@dataclass(frozen=True, slots=True)
class PathTouched:
    path: Path


@dataclass(frozen=True, slots=True)
class Tick:
    pass


@dataclass(frozen=True, slots=True)
class Rescan:
    folder: Path | None = None  # None: every source, and stat every known file


@dataclass(frozen=True, slots=True)
class Stop:
    pass


@dataclass(frozen=True, slots=True)
class IndexSearch:
    """Put the next slice of the search rows a cold catch-up saved into the full-text index."""


@dataclass(frozen=True, slots=True)
class TaskBound:
    """A task agentbar launched runs session ``key`` in process ``process`` (its PTY's child):
    the session's snapshot names the task, and its liveness is that process's."""

    task_id: str
    key: SessionKey
    process: Process


@dataclass(frozen=True, slots=True)
class TaskScreen:
    """What a launched task's screen shows: an approval prompt came up, or went (``at``: when,
    epoch seconds)."""

    task_id: str
    waiting: bool
    question: str
    at: float


@dataclass(frozen=True, slots=True)
class TaskExited:
    task_id: str
    at: float
    detail: str  # "exit status 0", "ended by SIGTERM"


@dataclass(frozen=True, slots=True)
class Faulted:
    """Something outside the engine thread went wrong in a way the person should hear about (a
    folder that cannot be watched): the engine reports it to its fault subscribers."""

    fault: Fault


Message = (
    PathTouched | Tick | Rescan | Stop | IndexSearch | TaskBound | TaskScreen | TaskExited | Faulted
)


@dataclass(frozen=True, slots=True)
class EngineStats:
    streams: int
    sessions: int
    lines: int
    bytes_read: int
    malformed: int
    oversized: int
    unknown: int
    odd_times: int  # timestamps no platform can represent (read as none)
    clamped: int  # numbers clamped to their range (token counts)
    orphaned: int
    unreadable: int
