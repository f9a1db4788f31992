"""The first reading of what is on disk, in two phases: which files the live sessions have
(read and decided first) and the history queued behind them in slices, with the counters its
progress is published from (engine thread only; stats files, reads none).

A file is live when it is a registry or the stream of a session that is or may be served by a
process now: written in the last ``LIVE_WINDOW_SECONDS``; of a session a registry, a process's
command line or the index names; or written since the oldest running client process of its
agent that no registry names started. The last rule is what makes the live phase enough for
``liveness.match``: a process is only ever bound to a session written to after it started, and
a file's mtime is never before its last line. Hook-event files follow the same rules (each
event of a session is appended to its file: a live session's is recent, or its process runs).
A live file's whole session group (every file the paths or the index give the same session)
comes along, so a session is rarely split between the phases; when it is (a file whose lines
name another session than its path), the reading order is tracked and the session is folded
again, in the serial order, at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .liveness import START_SLACK_SECONDS
from .model import Agent, SessionKey
from .sources.base import StreamKind
from .streams import Stream

# A session written this recently is live whatever the process table says: the table is only
# refreshed now and then, a remote or another user's agent shows no process here, and a
# session that just ended is what the person looks at. Minutes, not the hour of "hot" files.
LIVE_WINDOW_SECONDS = 600.0
FIRST_SLICE_BYTES = 8 * 1024 * 1024
MIN_SLICE_BYTES = 1024 * 1024
MAX_SLICE_BYTES = 256 * 1024 * 1024
SLICE_SECONDS = 0.25  # the inbox waits at most about this long behind one slice of history


@dataclass(slots=True)
class Pending:
    """A stream to read at start: its bytes to read (for slicing and progress) and mtime."""

    stream: Stream
    size: int
    mtime: float


def changed(streams: Iterable[Stream]) -> list[Pending]:
    """The streams whose file moved since the index saw it (or is gone: reading notices),
    in the given order, with one stat each."""
    found = []
    for stream in streams:
        try:
            st = os.stat(stream.spec.path)
        except OSError:
            found.append(Pending(stream, 0, 0.0))
            continue
        if (st.st_size, st.st_mtime_ns) == (stream.size, stream.mtime_ns):
            continue
        offset = 0 if stream.spec.compressed else stream.position.offset
        found.append(Pending(stream, max(0, st.st_size - offset), st.st_mtime))
    return found


def group_of(stream: Stream) -> SessionKey | None:
    """The session a stream belongs to as far as is known before reading it: the index's
    word, else its path's."""
    if stream.session is not None:
        return stream.session
    hint = stream.spec.session_hint
    return None if hint is None else SessionKey(stream.spec.agent, hint)


@dataclass(frozen=True, slots=True)
class LiveRules:
    """What makes a stream live: ``now`` minus the window, the sessions known to be live, and
    per agent the start of its oldest running client process no registry names."""

    now: float
    keys: frozenset[SessionKey]
    since: Mapping[Agent, float]

    def is_live(self, item: Pending) -> bool:
        spec = item.stream.spec
        if spec.kind is StreamKind.REGISTRY or group_of(item.stream) in self.keys:
            return True
        if item.mtime >= self.now - LIVE_WINDOW_SECONDS:
            return True
        since = self.since.get(spec.agent)
        return since is not None and item.mtime >= since - START_SLACK_SECONDS


def split_live(pending: list[Pending], rules: LiveRules) -> tuple[list[Pending], list[Pending]]:
    """(live, history), each in the given order; a live stream's whole group is live."""
    groups = {group_of(p.stream) for p in pending if rules.is_live(p)} - {None}
    live, history = [], []
    for item in pending:
        if rules.is_live(item) or group_of(item.stream) in groups:
            live.append(item)
        else:
            history.append(item)
    return live, history


@dataclass
class History:
    """The history still to read behind the live sessions, and what the reading of it must
    keep track of so that it ends where a serial catch-up would."""

    queue: list[Pending]
    # Every stream read at start, in the serial order (live and history alike).
    order: dict[str, int]
    live: set[SessionKey] = field(default_factory=set)  # their transitions are news
    # Sessions whose transitions are not news yet: read from the history, or waiting to be.
    quiet: set[SessionKey] = field(default_factory=set)
    settling: set[SessionKey] = field(default_factory=set)  # decided silently in this batch
    split: set[SessionKey] = field(default_factory=set)  # read out of the serial order
    last_read: dict[SessionKey, int] = field(default_factory=dict)
    files_total: int = 0
    bytes_total: int = 0
    files_done: int = 0
    bytes_done: int = 0
    slice_bytes: int = FIRST_SLICE_BYTES
    _next: int = 0  # queue[_next:] is still to come, but for the streams taken out of turn
    _waiting: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._waiting = {p.stream.path for p in self.queue}

    @classmethod
    def plan(cls, live: list[Pending], history: list[Pending], serial: list[Pending]) -> History:
        for item in history:
            # Nothing to save of a file still waiting (its first read marks it): the live
            # phase's save writes the live files' rows alone.
            item.stream.unsaved = False
        waiting = {k for p in history if (k := group_of(p.stream)) is not None}
        live_keys = {group_of(p.stream) for p in live}
        return cls(
            queue=history,
            order={p.stream.path: i for i, p in enumerate(serial)},
            quiet=waiting - live_keys,
            files_total=len(history),
            bytes_total=sum(p.size for p in history),
        )

    @property
    def empty(self) -> bool:
        return not self._waiting

    def waiting(self, path: str) -> bool:
        """Whether the stream at ``path`` is still to be read."""
        return path in self._waiting

    def next_slice(self) -> list[Stream]:
        """The next streams to read, about ``slice_bytes`` of them (one at least)."""
        taken: list[Stream] = []
        size = 0
        while self._next < len(self.queue) and (not taken or size < self.slice_bytes):
            item = self.queue[self._next]
            self._next += 1
            if item.stream.path not in self._waiting:
                continue  # read out of turn already
            taken.append(item.stream)
            size += item.size
            self._count(item)
        return taken

    def peek_rest(self) -> list[Stream]:
        """The streams the next slices would give now, in their order, left in the queue
        (handed to the workers ahead of their turn, as far as their window lets them go)."""
        return [p.stream for p in self.queue[self._next :] if p.stream.path in self._waiting]

    def take_group(self, stream: Stream) -> list[Stream]:
        """``stream`` and the rest of its group still waiting, out of turn (a file event came
        for it: its session is live)."""
        key = group_of(stream)
        group = [
            p
            for p in self.queue[self._next :]
            if p.stream.path in self._waiting
            and (p.stream is stream or (key is not None and group_of(p.stream) == key))
        ]
        for item in group:
            self._count(item)
        return [p.stream for p in group]

    def _count(self, item: Pending) -> None:
        self._waiting.discard(item.stream.path)
        self.files_done += 1
        self.bytes_done += item.size

    def adapt(self, bytes_read: int, seconds: float) -> None:
        """Aim the next slice at ``SLICE_SECONDS`` at the rate this one was read."""
        if bytes_read <= 0 or seconds <= 0.0:
            return
        wanted = int(bytes_read / seconds * SLICE_SECONDS)
        self.slice_bytes = max(MIN_SLICE_BYTES, min(MAX_SLICE_BYTES, wanted))

    def note_read(self, streams: Iterable[Stream]) -> None:
        """Track each session's reading order: a stream read after one that comes later in
        the serial order splits its session (folded again at the end)."""
        for stream in streams:
            key = stream.session
            if key is None or stream.spec.kind is StreamKind.REGISTRY:
                continue
            place = self.order.get(stream.path, len(self.order))
            if place < self.last_read.get(key, -1):
                self.split.add(key)
            self.last_read[key] = max(place, self.last_read.get(key, -1))

    def serial_place(self, path: str) -> tuple[int, str]:
        return (self.order.get(path, len(self.order)), path)

    def reports(self, key: SessionKey) -> bool:
        """Whether a transition of ``key`` is news while the history is read."""
        return key not in self.quiet and key not in self.settling
