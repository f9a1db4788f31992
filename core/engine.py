"""The engine: the one thread that reads every source, runs the state machines, keeps the index
and publishes state changes (engine thread; other threads only ``post`` and read snapshots).

Everything mutable here is touched by the engine thread alone, so the state code needs no locks
and tests drive it deterministically with ``catch_up()``, ``step()`` and ``drain()``. Watchers
and the ticker only put messages in the inbox.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentbar.core import facts as facts_mod
from agentbar.core import liveness
from agentbar.core.clock import Clock, SystemClock
from agentbar.core.facts import SessionFacts
from agentbar.core.index import Index, IndexUnusable, SessionRow, StreamRow
from agentbar.core.model import (
    Agent,
    Process,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
    StateChange,
)
from agentbar.core.procs import ProcessTable
from agentbar.core.records import Bookkeeping, Record, TitleSet, Unknown
from agentbar.core.search import MAIN_THREAD, FileOwner, SearchBatch, SearchEntry
from agentbar.core.sources.base import AgentSource, Owner, RegistryEntry, StreamKind
from agentbar.core.sources.snapshot import SnapshotFeed
from agentbar.core.state import fusion, hooks, turns
from agentbar.core.state.hooks import HookState
from agentbar.core.state.turns import TurnState
from agentbar.core.streams import Stream, StreamTable
from agentbar.core.tail import DEFAULT_MAX_LINE_BYTES

log = logging.getLogger(__name__)

# An agent whose kit is gone (its rows stay in the index): its transcript alone, no quiet rule.
UNKNOWN_TRAITS = fusion.AgentTraits(quiet_done_after=None)
LIVE_STEP_BUDGET_BYTES = 64 * 1024 * 1024  # per stream per step once live: stay responsive
# A session written to this recently, with no process found for it yet, is not declared ended:
# the process table is only refreshed now and then, and a new agent can write before we see it.
UNBOUND_GRACE_SECONDS = 10.0
FUTURE_SLACK_SECONDS = 60.0
REGISTRY_START_SLACK = 5.0  # a registry's startedAt comes a little after its process started
MAX_BATCH = 10_000
SEARCH_SLICE_ROWS = 2_000  # full-text indexing after a cold start, per step (~50 ms)
# A cold catch-up saves what it read whenever this much search text waits in memory.
SEARCH_FLUSH_CHARS = 4_000_000
ENGINE_RETRY_SECONDS = 1.0
CAUGHT_UP = "caught up, reporting changes from now on"  # the log line that says so
# An ended session's hook-events file is deleted once the session and the file have been quiet
# this long (its state is kept in the index; only the raw events go).
HOOK_FILE_KEEP_SECONDS = 24 * 3600.0


# -- inbox messages ----------------------------------------------------------------------------


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


Message = PathTouched | Tick | Rescan | Stop | IndexSearch | TaskBound | TaskScreen | TaskExited


@dataclass(eq=False)
class _TaskLink:
    """A launched task's hold on its session (the engine thread's own record)."""

    key: SessionKey
    process: Process
    pty: fusion.PtyView = field(default_factory=fusion.PtyView)


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


@dataclass(eq=False)
class _Session:
    key: SessionKey
    turn: TurnState = field(default_factory=TurnState)
    facts: SessionFacts = field(default_factory=SessionFacts)
    hooks: HookState = field(default_factory=HookState)
    transcript: str | None = None
    streams: set[str] = field(default_factory=set)
    registry: RegistryEntry | None = None
    # When the registry last said the agent was busy, by the agent's clock.
    registry_active_at: float | None = None
    process: Process | None = None
    alive: bool | None = None
    # Once a session has had a process, losing it ends the session at once; only a session
    # never seen with one gets the grace period (its process may not be in the table yet).
    had_process: bool = False
    state: SessionState | None = None
    state_since: float | None = None
    reported: SessionState | None = None  # the last state subscribers were told about
    hold_until: float | None = None  # a provisional state waits for its detail until then
    undecided: bool = True  # changed since its state was last decided
    unsaved: bool = True  # its row differs from the index

    def mark(self) -> None:
        self.undecided = True
        self.unsaved = True

    @property
    def visible(self) -> bool:
        """Listed to users: it has its own transcript, a live registry entry, or hook events
        that say where it runs (a session can announce itself before its first line)."""
        return (
            self.transcript is not None or self.registry is not None or self.hooks.cwd is not None
        )

    @property
    def project(self) -> str | None:
        registry = self.registry
        return self.facts.project or (registry.cwd if registry else None) or self.hooks.cwd


class Engine:
    def __init__(
        self,
        sources: Sequence[AgentSource],
        index: Index,
        *,
        processes: ProcessTable,
        traits: Mapping[Agent, fusion.AgentTraits],
        clock: Clock | None = None,
        tick_seconds: float = 2.0,
        full_rescan_seconds: float = 30.0,
        hot_seconds: float = 3600.0,
        # How long a provisional state waits for its detail. Claude 2.1.3xx writes its
        # transcript every 100 ms, after the registry: 0.1-0.3 s behind, more on a busy machine.
        settle_seconds: float = 1.0,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_open_files: int = 64,
    ) -> None:
        self.sources = list(sources)
        self.traits = dict(traits)  # each agent's, from its kit (``Settings.traits()``)
        self.index = index
        self.processes = processes
        self.clock = clock or SystemClock()
        self.tick_seconds = tick_seconds
        self.full_rescan_seconds = full_rescan_seconds
        self.hot_seconds = hot_seconds
        self.settle_seconds = settle_seconds
        self.streams = StreamTable(sources, max_line_bytes=max_line_bytes, max_open=max_open_files)
        self.snapshots = SnapshotFeed(sources)  # sessions kept in a database (opencode)
        self._inbox: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self._sessions: dict[SessionKey, _Session] = {}
        self._deleted_streams: set[str] = set()
        self._deleted_sessions: set[SessionKey] = set()
        self._subscribers: list[Callable[[StateChange], None]] = []
        self._published: dict[SessionKey, SessionSnapshot] = {}
        self._unpublished: set[SessionKey] = set()
        self._caught_up = False
        self._last_full_rescan = 0.0
        self._lines = 0
        self._bytes = 0
        self._orphaned = 0
        self._exiting: set[Process] = set()  # agents that removed their registry, still exiting
        self._unreadable = 0
        self._search_chars = 0  # search text read and not yet saved
        self._task_links: dict[str, _TaskLink] = {}  # by task id
        self._task_of: dict[SessionKey, str] = {}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.ready = threading.Event()  # set once the first catch-up is done

    # -- public API (any thread) -------------------------------------------------------------

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        """Call ``callback`` on the engine thread for every state change after catch-up. It
        must return quickly (hand work to its own thread)."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def post(self, message: Message) -> None:
        self._inbox.put(message)

    def sessions(self) -> list[SessionSnapshot]:
        """The latest published snapshot of every visible session."""
        return list(self._published.values())

    def stats(self) -> EngineStats:
        streams = list(self.streams)
        return EngineStats(
            streams=len(streams),
            sessions=len(self._published),
            lines=self._lines,
            bytes_read=self._bytes,
            malformed=sum(s.malformed for s in streams),
            oversized=sum(s.oversized for s in streams),
            unknown=sum(s.unknown for s in streams),
            odd_times=sum(s.odd_times for s in streams),
            clamped=sum(s.clamped for s in streams),
            orphaned=self._orphaned,
            unreadable=self._unreadable,
        )

    def start(self) -> None:
        """Run on a thread of its own: catch up, then follow the inbox until ``stop()``."""
        self._thread = threading.Thread(target=self._run, name="agentbar-engine", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self.post(Stop())
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.streams.close_all()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                if not self._caught_up:
                    self.catch_up()
                self.step(timeout=None)
            except Exception:
                # A bug must not silence every session: log it, breathe, carry on.
                log.exception("the engine failed on a batch; continuing")
                self._stopping.wait(ENGINE_RETRY_SECONDS)
            finally:
                self.ready.set()

    # -- driving (the engine thread, or a test's thread when no engine thread runs) ----------

    def catch_up(self) -> None:
        """Load the index, read whatever changed since, and settle every state without
        reporting it (a transition that happened while nobody watched is not news)."""
        self._load_index()
        self._rescan()
        self.processes.refresh()
        self._check_liveness(full=True)
        for session in self._sessions.values():
            self._decide(session, report=False)
        self._persist()
        self._publish()
        self._caught_up = True
        self._last_full_rescan = self.clock.monotonic()
        with contextlib.suppress(sqlite3.Error):
            if self.index.search_backlog():
                self.post(IndexSearch())  # what the catch-up saved, in slices from now on
        self.ready.set()
        # Said once per start: what changes before this line is settled silently, what changes
        # after it is reported (`agentbar watch -v` readers wait for it).
        log.info("%s: %d sessions", CAUGHT_UP, len(self._published))

    def step(self, timeout: float | None = 0.0) -> bool:
        """Handle one batch of messages; False when the inbox was empty."""
        wait = self._wait_for(timeout)
        try:
            first = self._inbox.get(timeout=wait) if wait != 0.0 else self._inbox.get_nowait()
        except queue.Empty:
            self._after_batch()
            return False
        batch = [first]
        with contextlib.suppress(queue.Empty):
            while len(batch) < MAX_BATCH:
                batch.append(self._inbox.get_nowait())
        touched: dict[str, Path] = {}
        tick = index_search = False
        rescans: list[Path | None] = []
        for message in batch:
            match message:
                case IndexSearch():
                    index_search = True
                case PathTouched(path=path):
                    touched[str(path)] = path
                case Tick():
                    tick = True
                case Rescan(folder=folder):
                    rescans.append(folder)
                case Stop():
                    self._stopping.set()
                case TaskBound() | TaskScreen() | TaskExited():
                    self._on_task(message)
        self._fold_snapshots(list(touched.values()))
        for path in touched.values():
            stream = self.streams.lookup_or_add(path)
            if stream is not None:
                self._read(stream, budget=LIVE_STEP_BUDGET_BYTES)
        for folder in rescans:
            self._rescan(folder)
        if tick:
            self._on_tick()
        self._after_batch()
        if index_search:
            self._index_search()
        return True

    def _index_search(self) -> None:
        try:
            more = self.index.index_search(SEARCH_SLICE_ROWS)
        except sqlite3.Error as exc:
            log.error("full-text indexing failed (%s); will retry", exc)
            more = True
        if more:
            self.post(IndexSearch())

    def drain(self) -> None:
        """Handle messages until the inbox is empty."""
        while self.step(timeout=0.0):
            pass

    def _wait_for(self, timeout: float | None) -> float | None:
        holds = [s.hold_until for s in self._sessions.values() if s.hold_until is not None]
        if not holds:
            return timeout
        until_hold = max(0.0, min(holds) - self.clock.time())
        return until_hold if timeout is None else min(timeout, until_hold)

    def _after_batch(self) -> None:
        self._check_liveness(full=False)
        report = self._caught_up
        for session in self._sessions.values():
            if session.undecided or session.hold_until is not None:
                self._decide(session, report=report)
        self._persist()
        self._publish()

    def _on_tick(self) -> None:
        now = self.clock.monotonic()
        if now - self._last_full_rescan >= self.full_rescan_seconds:
            self._last_full_rescan = now
            self._rescan()
            self._prune_hook_files()
        else:
            self._stat_hot_streams()
        self._check_liveness(full=True)
        for session in self._sessions.values():
            if session.state is None or session.state.state is not State.ENDED:
                session.undecided = True  # time-based rules: quiet turns, stale sub-agents

    # -- reading -----------------------------------------------------------------------------

    def _rescan(self, folder: Path | None = None) -> None:
        """Find new files (everywhere, or under ``folder``) and read them; a full rescan also
        stats every known file and reads the changed ones (and so notices the gone ones)."""
        new = self.streams.scan(folder)
        self._fold_snapshots(None)
        if folder is not None:
            for stream in new:
                self._read(stream, budget=None)
            return
        for stream in self.streams:
            self._read_if_changed(stream)

    def _stat_hot_streams(self) -> None:
        """Catch writes whose file events were dropped: stat the registries and the files of
        sessions that are live or were written in the last hour (cheap); everything else waits
        for the full rescan."""
        horizon = self.clock.time() - self.hot_seconds
        hot = [
            path
            for session in self._sessions.values()
            if session.alive is not False or (session.facts.last_activity or 0.0) >= horizon
            for path in session.streams
        ]
        for registry in self.streams.registries():
            self._read_if_changed(registry)
        self._fold_snapshots(None)
        for path in hot:
            stream = self.streams.get(path)
            if stream is not None:
                self._read_if_changed(stream)

    def _fold_snapshots(self, paths: list[Path] | None) -> None:
        """New records of the sessions kept in databases (``sources/snapshot.py``)."""
        for new in self.snapshots.read(paths) if self.snapshots else ():
            key = SessionKey(new.stream.spec.agent, new.owner.session_id)
            if new.fresh and key in self._sessions:  # restored from the index: fold it anew
                self._sessions[key].turn, self._sessions[key].facts = TurnState(), SessionFacts()
            self._apply(new.stream, new.owner, new.records)

    def _read_if_changed(self, stream: Stream) -> None:
        if stream.changed_on_disk() is not False:
            self._read(stream, budget=None)

    def _read(self, stream: Stream, budget: int | None) -> None:
        try:
            self._read_unguarded(stream, budget)
        except Exception as exc:
            # An adapter bug on one odd file must not stop the others from being read.
            log.exception("failed to read %s", stream.path)
            stream.last_error = f"internal error: {exc!r}"
            self._unreadable += 1
        if self._search_chars > SEARCH_FLUSH_CHARS and not self._caught_up:
            self._stage_search()  # a cold catch-up: keep what waits in memory small

    def _read_unguarded(self, stream: Stream, budget: int | None) -> None:
        if stream.spec.kind is StreamKind.REGISTRY:
            self._read_registry(stream)
            return
        outcome = self.streams.read(stream, budget)
        self._lines += outcome.lines
        self._bytes += outcome.bytes_read
        if outcome.failed:
            self._unreadable += 1
        if outcome.reset and stream.session is not None:
            log.info("%s was replaced or truncated; re-reading its session", stream.path)
            self._rebuild(stream.session)
            return
        if outcome.records or outcome.owner is not None:
            self._apply(stream, outcome.owner, outcome.records, outcome.search)
        if outcome.gone:
            self._stream_gone(stream)
        elif outcome.more:
            self.post(PathTouched(stream.spec.path))  # the rest next step

    def _apply(
        self,
        stream: Stream,
        owner: Owner | None,
        records: list[Record],
        search: list[SearchEntry] | None = None,
    ) -> None:
        if owner is None:
            self._orphaned += len(records)
            return
        key = SessionKey(stream.spec.agent, owner.session_id)
        if not records and key not in self._sessions:
            return  # nothing complete to say yet (a half-written first line)
        session = self._session(key)
        if search:
            stream.search.extend(search)
            self._search_chars += sum(len(entry[3]) for entry in search)
        if stream.session != key:
            old = self._sessions.get(stream.session) if stream.session else None
            if old is not None:
                self._move_stream_from(old, stream.path)
                stream.search_moved = True  # its rows already in the index change session
            stream.session = key
            stream.agent_id = owner.agent_id
        session.streams.add(stream.path)
        is_main = stream.spec.kind is StreamKind.TRANSCRIPT and owner.agent_id is None
        if (
            is_main
            and session.transcript != stream.path
            and any(not isinstance(r, Bookkeeping | TitleSet | Unknown) for r in records)
        ):
            # A file of bookkeeping alone is no conversation (Claude 2.0.x's resume leaves one
            # with just a summary line under a fresh id): it makes no session of its own.
            session.transcript = stream.path
            session.mark()
        if not records:
            return
        if stream.spec.kind is StreamKind.HOOKS:
            session.hooks = hooks.reduce_all(session.hooks, records)
        else:
            session.turn = turns.reduce_all(session.turn, records)
        session.facts = facts_mod.fold_all(session.facts, records)  # times: hooks count too
        session.mark()
        self._unpublished.add(key)

    def _move_stream_from(self, old: _Session, path: str) -> None:
        """A file's lines turned out to belong to another session (Claude 1.0.x resumes into a
        new file whose lines carry the resumed session's id): the session it was first filed
        under loses it, and goes if that was all it had."""
        old.streams.discard(path)
        if old.transcript == path:
            old.transcript = None
        old.mark()
        self._unpublished.add(old.key)
        if not old.streams and old.registry is None and old.process is None:
            del self._sessions[old.key]
            self._deleted_sessions.add(old.key)

    def _session(self, key: SessionKey) -> _Session:
        session = self._sessions.get(key)
        if session is None:
            session = _Session(key)
            self._sessions[key] = session
            self._deleted_sessions.discard(key)
            task_id = self._task_of.get(key)
            if task_id is not None:
                self._hold(session, self._task_links[task_id])
        return session

    # -- launched tasks ------------------------------------------------------------------------

    def _on_task(self, message: TaskBound | TaskScreen | TaskExited) -> None:
        if isinstance(message, TaskBound):
            link = self._task_links.get(message.task_id)
            if link is not None and link.key != message.key:
                self._let_go(link)  # bound anew (``/clear``): the old session is over
            if link is None or link.key != message.key:
                link = _TaskLink(key=message.key, process=message.process)
                self._task_links[message.task_id] = link
                self._task_of[message.key] = message.task_id
            link.process = message.process
            session = self._sessions.get(message.key)
            if session is not None:
                self._hold(session, link)
            return
        link = self._task_links.get(message.task_id)
        if link is None:
            return
        if isinstance(message, TaskScreen):
            link.pty = fusion.PtyView(
                waiting=message.waiting,
                changed_at=message.at,
                question=message.question,
            )
        else:
            link.pty = fusion.PtyView(
                changed_at=link.pty.changed_at, exited=True, detail=message.detail
            )
            self._exiting.add(link.process)
        session = self._sessions.get(link.key)
        if session is None:
            return
        if link.pty.exited and session.process is not None:
            session.process = None
            session.alive = False
        session.mark()
        self._unpublished.add(session.key)

    def _hold(self, session: _Session, link: _TaskLink) -> None:
        """The task's process is the session's (unless the task already exited)."""
        if link.pty.exited:
            return
        session.process = link.process
        session.alive = True
        session.had_process = True
        session.mark()
        self._unpublished.add(session.key)

    def _let_go(self, link: _TaskLink) -> None:
        self._task_of.pop(link.key, None)
        session = self._sessions.get(link.key)
        if session is not None and session.process == link.process:
            session.process = None
            session.alive = False
            session.mark()
            self._unpublished.add(session.key)

    def _rebuild(self, key: SessionKey) -> None:
        """Fold the session again from the top of every one of its files."""
        session = self._sessions[key]
        session.turn, session.facts, session.hooks = TurnState(), SessionFacts(), HookState()
        session.mark()
        for path in sorted(session.streams):
            stream = self.streams.get(path)
            if stream is not None:
                stream.restart()
                stream.session = key
        for path in sorted(session.streams):
            stream = self.streams.get(path)
            if stream is not None:
                outcome = self.streams.read(stream, budget=None)
                self._apply(stream, outcome.owner, outcome.records, outcome.search)

    def _stream_gone(self, stream: Stream) -> None:
        self.streams.remove(stream)
        self._deleted_streams.add(stream.path)
        if stream.spec.kind is StreamKind.REGISTRY:
            if stream.registry is not None:
                # The agent removes its registry as it exits: never match its last moments
                # to the session again by command line (that undid "ended" until a tick).
                self._exiting |= {
                    s.process
                    for s in self._sessions.values()
                    if s.registry is not None
                    and s.registry.pid == stream.registry.pid
                    and s.process is not None
                }
                self._unbind_registry(stream.registry)
            return
        session = self._sessions.get(stream.session) if stream.session else None
        if session is None:
            return
        session.streams.discard(stream.path)
        if session.transcript == stream.path:
            session.transcript = None
        session.mark()
        self._unpublished.add(session.key)
        if not session.streams and session.registry is None:
            # Its files are gone (the agent's cleanup sweep, or by hand): so is the session.
            del self._sessions[session.key]
            self._deleted_sessions.add(session.key)

    # -- per-session resources -----------------------------------------------------------------

    def _release(self, session: _Session) -> None:
        """An ended session keeps no file open (each stream belongs to this one session; the
        folder watches are shared by every session and stay). A resumed session's files are
        opened again, at their cursors, by the next read."""
        for path in session.streams:
            stream = self.streams.get(path)
            if stream is not None:
                self.streams.close(stream)

    def _prune_hook_files(self) -> None:
        """Delete the hook-events files of sessions that ended, where neither the session nor
        the file changed for a day. Never one still written to: the file must be quiet and
        fully read, and a session that resumes simply starts a new file."""
        horizon = self.clock.time() - HOOK_FILE_KEEP_SECONDS
        for stream in self.streams:
            if stream.spec.kind is not StreamKind.HOOKS or stream.session is None:
                continue
            session = self._sessions.get(stream.session)
            if session is None or session.state is None or session.state.state is not State.ENDED:
                continue
            if max(session.hooks.last_at or 0.0, session.facts.last_activity or 0.0) > horizon:
                continue
            try:
                st = os.stat(stream.spec.path)
                if st.st_mtime > horizon or st.st_size != stream.position.offset:
                    continue
                os.unlink(stream.spec.path)
            except OSError:
                continue
            log.info("pruned the hook events of ended session %s", session.key)
            self._stream_gone(stream)

    # -- the live registry -------------------------------------------------------------------

    def _read_registry(self, stream: Stream) -> None:
        entry = self.streams.read_registry(stream)
        if entry is False:
            self._stream_gone(stream)
            return
        if not isinstance(entry, RegistryEntry):
            return  # half-written: keep the last good entry until the next write or rescan
        previous, stream.registry = stream.registry, entry
        if previous is not None and previous.session_id != entry.session_id:
            self._unbind_registry(previous)  # the process moved on (``/clear``)
        key = SessionKey(stream.spec.agent, entry.session_id)
        stream.session = key
        process = self._registry_process(entry)
        if process is None:
            self._unbind_registry(entry)  # a leftover from a crash, or a reused pid
            return
        session = self._session(key)
        session.registry, session.process, session.alive = entry, process, True
        session.had_process = True
        if (entry.status or "").lower() == "busy" and entry.updated_at is not None:
            session.registry_active_at = entry.updated_at
        session.mark()
        self._unpublished.add(key)

    def _registry_process(self, entry: RegistryEntry) -> Process | None:
        info = self.processes.lookup(entry.pid)
        if info is None:
            return None
        if entry.started_at is not None and (
            info.create_time > entry.started_at + REGISTRY_START_SLACK
        ):
            return None  # this pid was given to a process that started after the agent did
        return Process(pid=info.pid, create_time=info.create_time)

    def _unbind_registry(self, entry: RegistryEntry) -> None:
        for session in self._sessions.values():
            if session.registry is not None and session.registry.pid == entry.pid:
                session.registry = None
                session.process = None
                session.alive = False  # that process is gone, or serves another session now
                session.mark()
                self._unpublished.add(session.key)

    # -- liveness ----------------------------------------------------------------------------

    def _check_liveness(self, *, full: bool) -> None:
        """``full`` (on ticks): re-check every bound process and match the unbound sessions.
        Otherwise: only match sessions that just got records and have no process."""
        now = self.clock.time()
        if full:
            changed = self.processes.refresh()
            self._exiting = {p for p in self._exiting if self.processes.is_alive(p)}
            for session in self._sessions.values():
                if session.process is not None and not self.processes.is_alive(session.process):
                    if session.registry is not None:
                        self._unbind_registry(session.registry)
                    session.process = None
                    session.alive = False
                    session.mark()
                    self._unpublished.add(session.key)
            pool = [
                s
                for s in self._sessions.values()
                if s.process is None and (changed or s.alive is not False or self._fresh(s, now))
            ]
        else:
            pool = [
                s
                for s in self._sessions.values()
                if s.process is None and s.undecided and (s.alive is None or self._fresh(s, now))
            ]
            if pool and any(s.alive is not True for s in pool):
                self.processes.refresh()  # a new agent may have started since the last tick
        pool = [s for s in pool if not self._bind_hook_pid(s)]
        if pool:
            self._bind_processes(pool, now)

    def _bind_hook_pid(self, session: _Session) -> bool:
        """Bind the process the session's hook events came from, when nothing else has: it
        must still run, be the agent's own client process, and have started before the event
        (a pid given to a newer process is not the agent). A process serves one session at a
        time, so the session whose events are newer takes it from another."""
        pid, pid_at = session.hooks.pid, session.hooks.pid_at
        view = session.hooks.view
        if pid is None or pid_at is None or (view is not None and view.state is State.ENDED):
            return False
        source = _one_per_agent(self.sources).get(session.key.agent)
        info = self.processes.lookup(pid)
        if source is None or info is None or not source.is_client_process(info):
            return False
        if info.create_time > pid_at + REGISTRY_START_SLACK:
            return False
        for other in self._sessions.values():
            if other is session or other.process is None or other.process.pid != pid:
                continue
            said_ended = other.hooks.view is not None and other.hooks.view.state is State.ENDED
            if other.registry is not None or (
                not said_ended and (other.facts.last_activity or 0.0) > pid_at
            ):
                return False  # the registry names it, or it has been used since
            other.process, other.alive = None, False
            other.mark()
            self._unpublished.add(other.key)
        session.process = Process(pid=info.pid, create_time=info.create_time)
        session.had_process = True
        session.alive = True
        session.mark()
        self._unpublished.add(session.key)
        return True

    def _fresh(self, session: _Session, now: float) -> bool:
        """Written to within the grace period, by the agent's own clock. A time far in the
        future (a wrong clock, a generated file) is not fresh: it would never stop being so."""
        last = session.facts.last_activity
        return last is not None and -FUTURE_SLACK_SECONDS < now - last < UNBOUND_GRACE_SECONDS

    def _bind_processes(self, unbound: list[_Session], now: float) -> None:
        taken = {s.process.pid for s in self._sessions.values() if s.process is not None}
        taken |= {s.registry.pid for s in self._sessions.values() if s.registry is not None}
        taken |= {p.pid for p in self._exiting}
        for source in _one_per_agent(self.sources).values():
            clients = liveness.without_wrappers(
                liveness.Client(
                    proc=proc,
                    cwd=source.process_cwd(proc),
                    session_hint=source.process_session_hint(proc),
                )
                for proc in self.processes.candidates()
                if proc.pid not in taken and source.is_client_process(proc)
            )
            mine = [s for s in unbound if s.key.agent == source.agent]
            candidates = [
                liveness.Candidate(
                    key=s.key,
                    cwd=s.facts.project or s.hooks.cwd,
                    started_at=s.facts.started_at,
                    last_activity=s.facts.last_activity,
                )
                for s in mine
            ]
            matched = liveness.match(clients, candidates) if clients else {}
            for session in mine:
                client = matched.get(session.key)
                alive: bool | None
                if client is not None:
                    session.process = Process(
                        pid=client.proc.pid, create_time=client.proc.create_time
                    )
                    session.had_process = True
                    alive = True
                    session.mark()
                elif self._fresh(session, now) and not session.had_process:
                    alive = None
                else:
                    alive = False
                if alive != session.alive:
                    session.alive = alive
                    session.mark()
                    self._unpublished.add(session.key)

    # -- deciding and reporting --------------------------------------------------------------

    def _decide(self, session: _Session, *, report: bool) -> None:
        session.undecided = False
        now = self.clock.time()
        reg = session.registry
        registry = (
            None
            if reg is None
            else fusion.RegistryView(
                reg.status, reg.waiting_for, reg.updated_at, session.registry_active_at
            )
        )
        task_id = self._task_of.get(session.key)
        signals = fusion.Signals(
            turn=session.turn,
            registry=registry,
            hook=session.hooks.view,
            alive=session.alive,
            last_activity=session.facts.last_activity,
            pty=None if task_id is None else self._task_links[task_id].pty,
        )
        new = fusion.decide(signals, now, self.traits.get(session.key.agent, UNKNOWN_TRAITS))
        if not new.same_transition(session.state):
            session.state_since = now
            if new.state is State.ENDED:
                self._release(session)
        previous = session.state
        if previous is None or not new.same_as(previous) or new.source != previous.source:
            # (A new source alone is no transition to report, but the row should say who
            # decides now: a hook taking over from the transcript, and back.)
            session.state = new
            session.unsaved = True
            self._unpublished.add(session.key)
        if not report or new.same_transition(session.reported):
            session.reported = new
            session.hold_until = None
            return
        if new.provisional:
            if session.hold_until is None:
                session.hold_until = now + self.settle_seconds
                return
            if now < session.hold_until:
                return
        session.hold_until = None
        previous, session.reported = session.reported, new
        if session.visible:
            self._notify(StateChange(ts=now, snapshot=self._snapshot(session), prev=previous))

    def _notify(self, change: StateChange) -> None:
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:
                log.exception("a state-change subscriber failed")

    def _snapshot(self, session: _Session) -> SessionSnapshot:
        facts = session.facts
        registry = session.registry
        state = session.state or SessionState(state=State.ENDED, source=Source.PROCESS)
        return SessionSnapshot(
            key=session.key,
            project=session.project,
            title=facts.title or (registry.name if registry else None),
            state=state,
            state_since=session.state_since or self.clock.time(),
            started_at=facts.started_at,
            last_activity=facts.last_activity,
            model=facts.model,
            usage=facts.usage,
            transcript=session.transcript or session.hooks.transcript_path,
            process=session.process,
            task_id=self._task_of.get(session.key),
            threads=self._threads(session),
        )

    def _threads(self, session: _Session) -> tuple[tuple[str, str], ...]:
        """The session's sub-agent files, by agent id (a sub-agent's own transcript, or a Codex
        sub-agent's rollout), for replay."""
        found = []
        for path in session.streams:
            stream = self.streams.get(path)
            if (
                stream is not None
                and stream.agent_id is not None
                and stream.spec.kind in (StreamKind.SUBAGENT, StreamKind.TRANSCRIPT)
            ):
                found.append((stream.agent_id, path))
        return tuple(sorted(found))

    def _publish(self) -> None:
        if not self._unpublished and self._caught_up:
            return
        published = dict(self._published)
        keys = self._unpublished if self._caught_up else set(self._sessions)
        for key in keys:
            session = self._sessions.get(key)
            if session is None or not session.visible:
                published.pop(key, None)
            else:
                published[key] = self._snapshot(session)
        self._published = published  # one reference swap: readers never see a half update
        self._unpublished = set()

    # -- persistence -------------------------------------------------------------------------

    def _load_index(self) -> None:
        try:
            stream_rows, session_rows = self.index.load()
        except IndexUnusable as exc:
            log.warning("index unreadable (%s); rebuilding it from the transcripts", exc)
            self.index.replace_all([], [])
            stream_rows, session_rows = {}, {}
        for row in session_rows.values():
            self._sessions[row.key] = _Session(
                key=row.key,
                turn=row.turn,
                facts=row.facts,
                hooks=row.hooks,
                transcript=row.transcript,
                process=row.process,
                alive=None if row.process else False,
                had_process=True,
                state=row.state,
                state_since=row.state_since,
                reported=row.state,
                undecided=False,
                unsaved=False,
            )
        for stream_row in stream_rows.values():
            found = self.streams.classify(Path(stream_row.path))
            if found is None:
                self._deleted_streams.add(stream_row.path)  # no adapter claims it any more
                continue
            source, spec = found
            session = (
                None
                if stream_row.session_id is None
                else SessionKey(stream_row.agent, stream_row.session_id)
            )
            stream = Stream(
                spec=spec,
                source=source,
                parser=source.parser(spec, stream_row.parser),
                cursor=stream_row.cursor,
                session=session,
                agent_id=stream_row.agent_id,
                size=-1 if spec.kind is StreamKind.REGISTRY else stream_row.size,
                mtime_ns=stream_row.mtime_ns,
                malformed=stream_row.malformed,
                oversized=stream_row.oversized,
                unknown=stream_row.unknown,
                odd_times=stream_row.odd_times,
                clamped=stream_row.clamped,
                last_error=stream_row.last_error,
                unsaved=False,
            )
            self.streams.add(stream)
            if session is not None and session in self._sessions:
                self._sessions[session].streams.add(stream_row.path)

    def _search_batch(self, streams: list[Stream]) -> SearchBatch:
        """The search rows to save with these streams: written with the streams' offsets, and
        put in the full-text index at once when live (after a cold catch-up, in slices)."""
        batch = SearchBatch(index_now=self._caught_up)
        for stream in streams:
            if stream.search_reset:
                batch.reset.append(stream.path)
            if stream.session is None or not (stream.search or stream.search_moved):
                continue
            batch.owners[stream.path] = FileOwner(stream.session, stream.agent_id or MAIN_THREAD)
            if stream.search:
                batch.rows[stream.path] = list(stream.search)
        batch.gone = list(self._deleted_streams)
        batch.gone_sessions = list(self._deleted_sessions)
        return batch

    def _stage_search(self) -> None:
        """Save the search rows read so far ahead of the streams' offsets (provisional rows:
        see ``SearchWriter``), and free them. A stream about to lose its old rows keeps its
        new ones for the save that drops the old."""
        batch = SearchBatch(index_now=False, provisional=True)
        staged = []
        for stream in self.streams:
            if stream.search and stream.session is not None and not stream.search_reset:
                batch.owners[stream.path] = FileOwner(
                    stream.session, stream.agent_id or MAIN_THREAD
                )
                batch.rows[stream.path] = list(stream.search)
                staged.append(stream)
        try:
            self.index.save(search=batch)
        except sqlite3.Error as exc:
            log.error("staging search rows failed (%s); they wait for the next save", exc)
            return
        for stream in staged:
            stream.search.clear()
        self._search_chars = 0

    def _persist(self) -> None:
        streams = [s for s in self.streams if s.unsaved]
        sessions = [s for s in self._sessions.values() if s.unsaved]
        if not (streams or sessions or self._deleted_streams or self._deleted_sessions):
            return
        try:
            self.index.save(
                [_stream_row(s) for s in streams],
                [_session_row(s) for s in sessions],
                deleted_streams=self._deleted_streams,
                deleted_sessions=self._deleted_sessions,
                search=self._search_batch(streams),
            )
        except sqlite3.DatabaseError as exc:
            log.error("index write failed (%s); rewriting it from memory", exc)
            try:
                self.index.replace_all(
                    [_stream_row(s) for s in self.streams],
                    [_session_row(s) for s in self._sessions.values()],
                )
            except sqlite3.Error as again:
                log.error("index rewrite failed too (%s); will retry", again)
                return
        except sqlite3.Error as exc:
            log.error("index write failed (%s); will retry", exc)
            return
        self._search_chars = 0
        for stream in streams:
            stream.unsaved = False
            stream.search.clear()
            stream.search_reset = stream.search_moved = False
        for session in sessions:
            session.unsaved = False
        self._deleted_streams.clear()
        self._deleted_sessions.clear()


def _one_per_agent(sources: Iterable[AgentSource]) -> dict[Agent, AgentSource]:
    """One adapter per agent for reading processes (Claude can have two config roots; the
    hook-events sources know no processes)."""
    seen: dict[Agent, AgentSource] = {}
    for source in sources:
        if source.finds_processes:
            seen.setdefault(source.agent, source)
    return seen


def _stream_row(stream: Stream) -> StreamRow:
    return StreamRow(
        path=stream.path,
        agent=stream.spec.agent,
        kind=stream.spec.kind,
        session_id=None if stream.session is None else stream.session.session_id,
        agent_id=stream.agent_id,
        cursor=stream.position,
        size=stream.size,
        mtime_ns=stream.mtime_ns,
        parser=stream.parser.checkpoint(),
        malformed=stream.malformed,
        oversized=stream.oversized,
        unknown=stream.unknown,
        odd_times=stream.odd_times,
        clamped=stream.clamped,
        last_error=stream.last_error,
    )


def _session_row(session: _Session) -> SessionRow:
    return SessionRow(
        key=session.key,
        transcript=session.transcript,
        turn=session.turn,
        facts=session.facts,
        state=session.state,
        state_since=session.state_since,
        process=session.process,
        hooks=session.hooks,
    )
