"""The engine: the one thread that reads every source, runs the state machines and publishes
state changes and faults (engine thread; other threads only ``post`` and read snapshots).

Everything mutable here is touched by the engine thread alone, so the state code needs no locks
and tests drive it deterministically with ``catch_up()``, ``step()`` and ``drain()``. Watchers
and the ticker only put messages in the inbox. The engine keeps the loop, the reading and the
deciding; its parts each do one job: ``engine_messages`` (what other threads post),
``session_record`` (what it knows of each session), ``process_binding`` (which process serves
which session), ``task_links`` (launched tasks' hold on their sessions), ``snapshots`` (what
it publishes to other threads) and ``index_writer`` (the index: load, save, search staging).
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

from . import facts as facts_mod
from .clock import Clock, SystemClock
from .engine_messages import (
    STARTING,
    EngineStats,
    Faulted,
    IndexProgress,
    IndexSearch,
    Message,
    PathTouched,
    Rescan,
    Stop,
    TaskBound,
    TaskExited,
    TaskScreen,
    Tick,
)
from .errors import Fault
from .facts import SessionFacts
from .index import Index
from .index_writer import IndexWriter
from .model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    State,
    StateChange,
)
from .process_binding import ProcessBinder
from .procs import ProcessTable
from .records import Bookkeeping, Record, TitleSet, Unknown
from .search import SEARCHABLE, SearchEntry, search_entry
from .session_record import SessionRecord, SessionTable
from .snapshots import SnapshotBoard
from .sources.base import AgentSource, Owner, RegistryEntry, StreamKind
from .sources.snapshot import SnapshotFeed
from .state import fusion, hooks, turns
from .state.hooks import HookState
from .state.turns import TurnState
from .streams import Stream, StreamTable
from .tail import DEFAULT_MAX_LINE_BYTES
from .task_links import TaskLinks

__all__ = [  # the messages, as other modules imported them from here before the split
    "CAUGHT_UP",
    "Engine",
    "EngineStats",
    "Faulted",
    "IndexProgress",
    "IndexSearch",
    "Message",
    "PathTouched",
    "Rescan",
    "Stop",
    "TaskBound",
    "TaskExited",
    "TaskScreen",
    "Tick",
]

log = logging.getLogger(__name__)

# An agent whose kit is gone (its rows stay in the index): its transcript alone, no quiet rule.
UNKNOWN_TRAITS = fusion.AgentTraits(quiet_done_after=None)
LIVE_STEP_BUDGET_BYTES = 64 * 1024 * 1024  # per stream per step once live: stay responsive
MAX_BATCH = 10_000
SEARCH_SLICE_ROWS = 2_000  # full-text indexing after a cold start, per step (~50 ms)
# A cold catch-up saves what it read whenever this much search text waits in memory.
SEARCH_FLUSH_CHARS = 4_000_000
ENGINE_RETRY_SECONDS = 1.0
CAUGHT_UP = "caught up, reporting changes from now on"  # the log line that says so
# An ended session's hook-events file is deleted once the session and the file have been quiet
# this long (its state is kept in the index; only the raw events go).
HOOK_FILE_KEEP_SECONDS = 24 * 3600.0


@dataclass
class _Batch:
    """One batch of inbox messages, sorted by what they ask of the engine."""

    touched: dict[str, Path] = field(default_factory=dict)
    rescans: list[Path | None] = field(default_factory=list)
    tick: bool = False
    index_search: bool = False


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
        self._sessions = SessionTable()
        self._binder = ProcessBinder(
            self._sessions, processes, _one_per_agent(self.sources), self.clock
        )
        self._tasks = TaskLinks(self._sessions, exiting=self._binder.process_exiting)
        self._writer = IndexWriter(
            index, self.streams, self._sessions, report=self._report, standins=self.snapshots
        )
        self._board = SnapshotBoard(self._sessions, self.streams, self._tasks, self.clock)
        self._subscribers: list[Callable[[StateChange], None]] = []
        self._fault_subscribers: list[Callable[[Fault], None]] = []
        self._progress_subscribers: list[Callable[[IndexProgress], None]] = []
        self._progress = STARTING
        self._faults: tuple[Fault, ...] = ()
        self._caught_up = False
        self._last_full_rescan = 0.0
        # The sessions a tick looks at (see ``_warm_sessions``): worked out anew at each full
        # rescan, joined by every session touched since.
        self._warm: set[SessionKey] = set()
        self._lines = 0
        self._bytes = 0
        self._orphaned = 0
        self._unreadable = 0
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.ready = threading.Event()  # set once the first catch-up is done

    # -- public API (any thread) -------------------------------------------------------------

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        """Call ``callback`` on the engine thread for every state change after catch-up. It
        must return quickly (hand work to its own thread)."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def subscribe_faults(self, callback: Callable[[Fault], None]) -> Callable[[], None]:
        """Call ``callback`` on the engine thread for every new fault (a folder it cannot
        watch, an index it rebuilt), and again, marked ``over``, when one has gone. It must
        return quickly, like a state subscriber."""
        self._fault_subscribers.append(callback)
        return lambda: self._fault_subscribers.remove(callback)

    def subscribe_progress(self, callback: Callable[[IndexProgress], None]) -> Callable[[], None]:
        """Call ``callback`` on the engine thread each time the first reading of the history
        moves on (a few times a second at most) and once when it is done. It must return
        quickly, like a state subscriber."""
        self._progress_subscribers.append(callback)
        return lambda: self._progress_subscribers.remove(callback)

    def progress(self) -> IndexProgress:
        """How far the first reading has come (the latest published value)."""
        return self._progress

    def faults(self) -> tuple[Fault, ...]:
        """The faults that last, once each, oldest first (those over are gone)."""
        return self._faults

    def post(self, message: Message) -> None:
        self._inbox.put(message)

    def sessions(self) -> list[SessionSnapshot]:
        """The latest published snapshot of every visible session."""
        return self._board.snapshots()

    def stats(self) -> EngineStats:
        streams = list(self.streams)
        return EngineStats(
            streams=len(streams),
            sessions=len(self._board),
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
        self._binder.check(full=True)
        for session in self._sessions:
            self._decide(session, report=False)
        self._writer.persist(index_now=self._caught_up)
        self._publish()
        self._caught_up = True
        self._set_progress(
            IndexProgress(
                live_ready=True,
                done=True,
                files_done=self._progress.files_total,
                files_total=self._progress.files_total,
                bytes_done=self._progress.bytes_total,
                bytes_total=self._progress.bytes_total,
            )
        )
        self._last_full_rescan = self.clock.monotonic()
        with contextlib.suppress(sqlite3.Error):
            if self.index.search_backlog():
                self.post(IndexSearch())  # what the catch-up saved, in slices from now on
        self.ready.set()
        # Said once per start: what changes before this line is settled silently, what changes
        # after it is reported (`agentbar watch -v` readers wait for it).
        log.info("%s: %d sessions", CAUGHT_UP, len(self._board))

    def _load_index(self) -> None:
        self._writer.load()

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
        work = self._sort(batch)
        self._fold_snapshots(list(work.touched.values()))
        for path in work.touched.values():
            stream = self.streams.lookup_or_add(path)
            if stream is not None:
                self._read(stream, budget=LIVE_STEP_BUDGET_BYTES)
        for folder in work.rescans:
            self._rescan(folder)
        if work.tick:
            self._on_tick()
        self._after_batch()
        if work.index_search:
            self._index_search()
        return True

    def _sort(self, batch: list[Message]) -> _Batch:
        """What a batch asks for, each thing once (a file touched ten times is read once);
        the task and fault messages are handled as they come."""
        work = _Batch()
        for message in batch:
            match message:
                case IndexSearch():
                    work.index_search = True
                case PathTouched(path=path):
                    work.touched[str(path)] = path
                case Tick():
                    work.tick = True
                case Rescan(folder=folder):
                    work.rescans.append(folder)
                case Stop():
                    self._stopping.set()
                case TaskBound() | TaskScreen() | TaskExited():
                    self._tasks.on_message(message)
                case Faulted(fault=fault):
                    self._report(fault)
        return work

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
        holds = [s.hold_until for s in self._candidates() if s.hold_until is not None]
        if not holds:
            return timeout
        until_hold = max(0.0, min(holds) - self.clock.time())
        return until_hold if timeout is None else min(timeout, until_hold)

    def _after_batch(self) -> None:
        candidates = self._candidates()
        self._binder.check(full=False, among=candidates)
        report = self._caught_up
        for session in candidates:
            if session.undecided or session.hold_until is not None:
                self._decide(session, report=report)
        self._writer.persist(index_now=self._caught_up)
        self._publish()

    def _on_tick(self) -> None:
        now = self.clock.monotonic()
        if now - self._last_full_rescan >= self.full_rescan_seconds:
            self._last_full_rescan = now
            self._rescan()
            self._prune_hook_files()
            warm = self._warm_sessions(everything=True)
        else:
            warm = self._warm_sessions(everything=False)
            self._stat_hot_streams(warm)
        self._binder.check(full=True, among=warm)
        for session in warm:
            if session.state is None or session.state.state is not State.ENDED:
                session.undecided = True  # time-based rules: quiet turns, stale sub-agents

    def _warm_sessions(self, *, everything: bool) -> list[SessionRecord]:
        """The sessions a tick must look at: live (or not known to be dead), not ended, or
        written in the last ``hot_seconds``. With 2,000 sessions on disk almost none are, and a
        tick that walked them all cost most of the engine's idle CPU. ``everything`` (a full
        rescan): work the set out from every session; otherwise the last set and the sessions
        touched since (a session only turns warm by a change: a read, a process bound), kept
        until the next full rescan even when they cool down."""
        table = self._sessions
        candidates = table if everything else self._candidates()
        table.touched.clear()
        horizon = self.clock.time() - self.hot_seconds
        warm = [
            s
            for s in candidates
            if s.alive is not False
            or s.state is None
            or s.state.state is not State.ENDED
            or s.undecided
            or s.hold_until is not None
            or (s.facts.last_activity or 0.0) >= horizon
        ]
        self._warm = {s.key for s in warm}
        return warm

    def _candidates(self) -> list[SessionRecord]:
        """The sessions that can be undecided or held (the warm ones and every one touched
        since the last tick; the rest were decided ended and are cold), in the table's order."""
        return self._sessions.in_order(self._warm | self._sessions.touched)

    # -- reading -----------------------------------------------------------------------------

    def _rescan(self, folder: Path | None = None) -> None:
        """Find new files (everywhere, or under ``folder``) and read them; a full rescan also
        stats every known file and reads the changed ones (and so notices the gone ones)."""
        new = self.streams.scan(folder)
        self._fold_snapshots(None)
        if folder is not None:
            self._read_streams(new)
            return
        self._read_streams([s for s in self.streams if s.changed_on_disk() is not False])

    def _read_streams(self, streams: Sequence[Stream]) -> None:
        """Read each of ``streams`` to its end, in this order (a cold catch-up reads almost
        every byte here)."""
        for stream in streams:
            self._read(stream, budget=None)

    def _stat_hot_streams(self, sessions: Iterable[SessionRecord]) -> None:
        """Catch writes whose file events were dropped: stat the registries and the files of
        ``sessions`` (the warm ones: live, or written in the last hour; cheap); everything
        else waits for the full rescan."""
        hot = [path for session in sessions for path in session.streams]
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
            self._apply(new.stream, new.owner, new.records, _search_rows(new.records))

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
        if self._writer.search_chars > SEARCH_FLUSH_CHARS and not self._caught_up:
            self._writer.stage_search()  # a cold catch-up: keep what waits in memory small

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
            self._writer.note_search(stream, search)
        if stream.session != key:
            old = self._sessions.get(stream.session)
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
        self._sessions.changed(session)

    def _move_stream_from(self, old: SessionRecord, path: str) -> None:
        """A file's lines turned out to belong to another session (Claude 1.0.x resumes into a
        new file whose lines carry the resumed session's id): the session it was first filed
        under loses it, and goes if that was all it had."""
        old.streams.discard(path)
        if old.transcript == path:
            old.transcript = None
        self._sessions.changed(old)
        if not old.streams and old.registry is None and old.process is None:
            self._sessions.remove(old.key)

    def _session(self, key: SessionKey) -> SessionRecord:
        session = self._sessions.get(key)
        if session is None:
            session = SessionRecord(key)
            self._sessions.add(session)
            self._tasks.on_new_session(session)
        return session

    def _rebuild(self, key: SessionKey) -> None:
        """Fold the session again from the top of every one of its files."""
        session = self._sessions[key]
        session.turn, session.facts, session.hooks = TurnState(), SessionFacts(), HookState()
        self._sessions.changed(session)
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
        self._writer.deleted_streams.add(stream.path)
        if stream.spec.kind is StreamKind.REGISTRY:
            if stream.registry is not None:
                self._binder.registry_removed(stream.registry)
            return
        session = self._sessions.get(stream.session)
        if session is None:
            return
        session.streams.discard(stream.path)
        if session.transcript == stream.path:
            session.transcript = None
        self._sessions.changed(session)
        if not session.streams and session.registry is None:
            # Its files are gone (the agent's cleanup sweep, or by hand): so is the session.
            self._sessions.remove(session.key)

    # -- per-session resources -----------------------------------------------------------------

    def _release(self, session: SessionRecord) -> None:
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
            self._binder.unbind_registry(previous)  # the process moved on (``/clear``)
        key = SessionKey(stream.spec.agent, entry.session_id)
        stream.session = key
        process = self._binder.registry_process(entry)
        if process is None:
            self._binder.unbind_registry(entry)  # a leftover from a crash, or a reused pid
            return
        session = self._session(key)
        session.registry, session.process, session.alive = entry, process, True
        session.had_process = True
        if (entry.status or "").lower() == "busy" and entry.updated_at is not None:
            session.registry_active_at = entry.updated_at
        self._sessions.changed(session)

    # -- deciding and reporting --------------------------------------------------------------

    def _signals(self, session: SessionRecord) -> fusion.Signals:
        reg = session.registry
        registry = (
            None
            if reg is None
            else fusion.RegistryView(
                reg.status, reg.waiting_for, reg.updated_at, session.registry_active_at
            )
        )
        return fusion.Signals(
            turn=session.turn,
            registry=registry,
            hook=session.hooks.view,
            alive=session.alive,
            last_activity=session.facts.last_activity,
            pty=self._tasks.pty_of(session.key),
        )

    def _decide(self, session: SessionRecord, *, report: bool) -> None:
        session.undecided = False
        now = self.clock.time()
        new = fusion.decide(
            self._signals(session), now, self.traits.get(session.key.agent, UNKNOWN_TRAITS)
        )
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
            self._sessions.unpublished.add(session.key)
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
            self._notify(StateChange(ts=now, snapshot=self._board.snapshot(session), prev=previous))

    def _notify(self, change: StateChange) -> None:
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:
                log.exception("a state-change subscriber failed")

    def _publish(self) -> None:
        self._board.publish(everything=not self._caught_up)

    def _set_progress(self, progress: IndexProgress) -> None:
        self._progress = progress
        for callback in list(self._progress_subscribers):
            try:
                callback(progress)
            except Exception:
                log.exception("a progress subscriber failed")

    def _report(self, fault: Fault) -> None:
        """Tell the fault subscribers of ``fault``, once: the same fault seen again (the same
        folder still unwatchable at the next tick) is not news. A fault marked ``over`` ends
        the one with its key (and is news only if that one was told)."""
        known = any(seen.key == fault.key for seen in self._faults)
        if known != fault.over:
            return
        # One reference swap, like the snapshots: readers on other threads see one or the other.
        if fault.over:
            self._faults = tuple(seen for seen in self._faults if seen.key != fault.key)
        else:
            self._faults = (*self._faults, fault)
        for callback in list(self._fault_subscribers):
            try:
                callback(fault)
            except Exception:
                log.exception("a fault subscriber failed")


def _search_rows(records: list[Record]) -> list[SearchEntry]:
    """The search rows of a stand-in stream's records. Its replay is rendered, so no offset
    into it is known here: a hit opens the session at its start."""
    rows = (search_entry(r, 0) for r in records if type(r) in SEARCHABLE)
    return [row for row in rows if row is not None]


def _one_per_agent(sources: Iterable[AgentSource]) -> dict[Agent, AgentSource]:
    """One adapter per agent for reading processes (Claude can have two config roots; the
    hook-events sources know no processes)."""
    seen: dict[Agent, AgentSource] = {}
    for source in sources:
        if source.finds_processes:
            seen.setdefault(source.agent, source)
    return seen
