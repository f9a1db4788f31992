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
class TaskStarted:
    """A task agentbar launched started its agent in ``process``: that process runs the
    task's own session, whichever it turns out to be (a fork's is a new one), so it is never
    matched to another session by its folder and start time."""

    task_id: str
    process: Process


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
    PathTouched
    | Tick
    | Rescan
    | Stop
    | IndexSearch
    | TaskStarted
    | TaskBound
    | TaskScreen
    | TaskExited
    | Faulted
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
    # Transcripts read that name no session (their records belong nowhere): left out.
    ignored_files: int = 0


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """How far the engine's first reading of what is on disk has come: the live sessions first
    (``live_ready``: the badge, ``status`` and the board are right for them), then the history
    behind them (files and bytes of it read so far). The tray's tooltip and menu, the board and
    a cold ``agentbar status`` on a terminal show it."""

    live_ready: bool  # the live sessions are read and decided
    done: bool  # everything on disk at start is read (``Engine.ready`` is set)
    files_done: int = 0
    files_total: int = 0
    bytes_done: int = 0
    bytes_total: int = 0

    @property
    def fraction(self) -> float:
        """Bytes read of the history, 0.0 to 1.0 (1.0 once done)."""
        if self.done:
            return 1.0
        if self.bytes_total <= 0:
            return 0.0
        return min(1.0, self.bytes_done / self.bytes_total)


STARTING = IndexProgress(live_ready=False, done=False)
