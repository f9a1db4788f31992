"""The engine: the one thread that reads every source, runs the state machines and publishes
state changes and faults (engine thread; other threads only ``post`` and read snapshots).

Everything mutable here is touched by the engine thread alone, so the state code needs no locks
and tests drive it deterministically with ``catch_up()``, ``step()`` and ``drain()``. Watchers
and the ticker only put messages in the inbox. The engine keeps the loop, the reading and the
deciding; its parts each do one job: ``engine_messages`` (what other threads post),
``session_record`` (what it knows of each session), ``process_binding`` (which process serves
which session), ``task_links`` (launched tasks' hold on their sessions), ``snapshots`` (what
it publishes to other threads), ``index_writer`` (the index: load, save, search staging),
``live_first`` (what a start reads first, and the history queued behind it) and ``cold_read``
(a large list of files read on every core, merged here in order).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import facts as facts_mod
from . import live_first
from .clock import Clock, SystemClock
from .cold_read import ColdReader, FileRead, FoldedRecords, adopt, still_as_sent
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
    TaskStarted,
    Tick,
)
from .errors import Fault
from .facts import SessionFacts
from .index import Index
from .index_writer import IndexWriter
from .limits import LimitStore, LimitWindow
from .limits_claude import ClaudeStatusLineRecord
from .model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    State,
    StateChange,
)
from .process_binding import ProcessBinder
from .procs import ProcessTable
from .records import Record, conversational
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
PROGRESS_SECONDS = 0.25  # the history's progress is published at most this often
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
        read_live_first: bool = True,
        claude_limits: ClaudeStatusLineRecord | None = None,
    ) -> None:
        """``read_live_first``: the first catch-up reads the live sessions' files before the history
        (False: everything in one go, in the serial order; the reference the tests compare
        with)."""
        self.sources = list(sources)
        self.traits = dict(traits)  # each agent's, from its kit (``Settings.traits()``)
        self.index = index
        self.processes = processes
        self.clock = clock or SystemClock()
        self.tick_seconds = tick_seconds
        self.full_rescan_seconds = full_rescan_seconds
        self.hot_seconds = hot_seconds
        self.settle_seconds = settle_seconds
        self.reads_live_first = read_live_first
        self.streams = StreamTable(sources, max_line_bytes=max_line_bytes, max_open=max_open_files)
        # Reads a large list of streams on every core (a cold catch-up); ``cold.workers = 0``
        # reads serially.
        self.cold = ColdReader(sources, max_line_bytes=max_line_bytes)
        self._cold_hold = contextlib.ExitStack()  # holds ``cold``'s workers while history is read
        self.snapshots = SnapshotFeed(sources)  # sessions kept in a database (opencode)
        self._inbox: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self._sessions = SessionTable()
        self._binder = ProcessBinder(
            self._sessions, processes, _one_per_agent(self.sources), self.clock
        )
        self._tasks = TaskLinks(
            self._sessions,
            exiting=self._binder.process_exiting,
            reserved=self._binder.process_reserved,
        )
        self._writer = IndexWriter(
            index, self.streams, self._sessions, report=self._report, standins=self.snapshots
        )
        self._board = SnapshotBoard(self._sessions, self.streams, self._tasks, self.clock)
        self._subscribers: list[Callable[[StateChange], None]] = []
        # The changes decided in this batch, told once the batch's state is published.
        self._untold: list[StateChange] = []
        self._fault_subscribers: list[Callable[[Fault], None]] = []
        self._progress_subscribers: list[Callable[[IndexProgress], None]] = []
        self._progress = STARTING
        self._faults: tuple[Fault, ...] = ()
        self._caught_up = False
        self._history: live_first.History | None = None  # while the history is read
        self._last_progress = 0.0
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
        # Set once the live sessions (a process, a registry, a file written in the last minutes)
        # are read and decided: their snapshots are right, the history is still being read.
        self.live_ready = threading.Event()
        self.ready = threading.Event()  # set once everything on disk at start is read
        # The agents' usage windows: Codex's from its rollouts' records (folded into each
        # session's facts), Claude's from the status-line link's record, read at each tick.
        self._limits = LimitStore()
        self._claude_limits = claude_limits

    # -- public API (any thread) -------------------------------------------------------------

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]:
        """Call ``callback`` on the engine thread for every state change after catch-up, once
        the change is published: ``sessions()`` read from then on (by the callback, or by a
        thread it wakes) shows the new state, never the one before. It must return quickly
        (hand work to its own thread)."""
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

    def limits(self) -> tuple[LimitWindow, ...]:
        """The newest observation of every agent's usage windows, as they stand now (Claude's
        link record is looked at again here: ``status`` reads without ticking)."""
        self._read_claude_limits()
        return self._limits.windows(self.clock.time())

    def limits_heard(self) -> frozenset[str]:
        """The agents whose limits source reported, with windows or without (Claude's link
        under an API-key login records payloads with none)."""
        return self._limits.heard()

    def _read_claude_limits(self) -> None:
        if self._claude_limits is not None:
            self._limits.note(self._claude_limits.read_if_changed())
            if self._claude_limits.recorded:
                self._limits.note_heard("claude")

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
            ignored_files=sum(1 for s in streams if _ignored(s)),
        )

    def ignored_files(self) -> list[str]:
        """Transcripts read that name no session (another tool's file in an agent's folder,
        whose lines say nothing of whose they are): their records are left out."""
        return [s.path for s in list(self.streams) if _ignored(s)]  # (a copy: the server asks)

    def start(self) -> None:
        """Run on a thread of its own: catch up, then follow the inbox until ``stop()``."""
        self._thread = threading.Thread(target=self._run, name="agentbar-engine", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self.post(Stop())
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self._thread is None or not self._thread.is_alive():
            self._cold_hold.close()  # (a thread still reading keeps its workers till it ends)
        self.streams.close_all()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                if not self._caught_up and self._history is None:
                    self._catch_up_live()
                if self._history is not None:
                    self.step(timeout=0.0)  # file events and tasks are served between slices
                    self._read_history_slice()
                else:
                    self.step(timeout=None)
            except Exception:
                # A bug must not silence every session: log it, breathe, carry on.
                log.exception("the engine failed on a batch; continuing")
                self._stopping.wait(ENGINE_RETRY_SECONDS)
                if not self._caught_up and self._history is None:
                    self.live_ready.set()  # no waiter hangs on a start that failed
                    self.ready.set()

    # -- driving (the engine thread, or a test's thread when no engine thread runs) ----------

    def catch_up(self) -> None:
        """Read everything on disk at start, on this thread, the live sessions first, and settle
        every state without reporting it (a transition that happened while nobody watched is
        not news); the progress is published as the history is read."""
        if self._history is None:
            self._catch_up_live()
        while self._history is not None:
            self._read_history_slice()

    def _catch_up_live(self) -> None:
        """Phase one: load the index, find every file (a stat each, no reading), read and decide
        the live sessions' files, publish them and set ``live_ready``; the rest is queued in
        ``_history`` (``live_first``), read by ``_read_history_slice``."""
        self._load_index()
        self.streams.scan()
        self._fold_snapshots(None)
        self.processes.refresh()
        serial = live_first.changed(self.streams)  # the order a serial catch-up reads them
        registries = [p.stream for p in serial if p.stream.spec.kind is StreamKind.REGISTRY]
        self._read_streams(registries)
        if self.reads_live_first:
            live, history = live_first.split_live(serial, self._live_rules())
        else:
            live = [p for p in serial if p.stream.spec.kind is StreamKind.REGISTRY]
            history = [p for p in serial if p.stream.spec.kind is not StreamKind.REGISTRY]
        self._history = live_first.History.plan(live, history, serial)
        # One pool of workers for all the history's slices, when it is worth one.
        self._cold_hold.enter_context(self.cold.held(self._history.bytes_total))
        if not self.reads_live_first:
            self._history.slice_bytes = sys.maxsize  # one slice: the serial catch-up
        rest = [p.stream for p in live if p.stream.spec.kind is not StreamKind.REGISTRY]
        # The workers go on into the history once the live files are handed out: they would
        # sit idle behind the last live file while this thread decides and publishes.
        self._read_streams(rest, ahead=self._history.peek_rest())
        self._binder.check(full=True)
        for session in self._sessions:
            self._decide(session, report=False)
            if session.key not in self._history.quiet:
                self._history.live.add(session.key)
        self._writer.persist(index_now=False)
        self._publish(everything=True)
        self.live_ready.set()
        self._last_progress = self._last_full_rescan = self.clock.monotonic()
        self._set_progress(self._history_progress())
        log.info("live sessions read: %d; %s", len(self._history.live), self._progress)
        if self._history.empty:
            self._finish_catch_up()

    def _live_rules(self) -> live_first.LiveRules:
        """What makes a stream live now (``live_first``), from the registries just read, the
        index's bound sessions and the process table."""
        keys = {s.key for s in self._sessions if s.registry is not None or s.process is not None}
        named = {s.registry.pid for s in self._sessions if s.registry is not None}
        since: dict[Agent, float] = {}
        for agent, source in _one_per_agent(self.sources).items():
            for proc in self.processes.candidates():
                if proc.pid in named or not source.is_client_process(proc):
                    continue
                hint = source.process_session_hint(proc)
                if hint is not None:
                    keys.add(SessionKey(agent, hint))
                else:
                    since[agent] = min(since.get(agent, proc.create_time), proc.create_time)
        return live_first.LiveRules(now=self.clock.time(), keys=frozenset(keys), since=since)

    def _read_history_slice(self) -> None:
        """Phase two, one slice: read the next few hundred milliseconds of the history and
        settle its sessions silently; publish the progress; finish after the last slice."""
        history = self._history
        if history is None:
            return
        started, planned = self.clock.monotonic(), history.bytes_done
        streams = history.next_slice()
        self._read_streams(streams, ahead=history.peek_rest())
        if self.reads_live_first:
            history.adapt(history.bytes_done - planned, self.clock.monotonic() - started)
        self._settle_read(history, streams)
        if history.empty:
            self._finish_catch_up()
        elif self.clock.monotonic() - self._last_progress >= PROGRESS_SECONDS:
            self._last_progress = self.clock.monotonic()
            self._set_progress(self._history_progress())

    def _settle_read(self, history: live_first.History, streams: Sequence[Stream]) -> None:
        """Decide the sessions just read from the history without reporting (the live ones
        among them too: what the history adds to them is not news), and publish them."""
        keys = {s.session for s in streams if s.session is not None}
        history.quiet |= keys - history.live
        history.settling = keys
        try:
            self._after_batch()
        finally:
            history.settling = set()

    def _read_out_of_turn(self, history: live_first.History, stream: Stream) -> None:
        """A file event came for a stream still waiting in the history: its session is live.
        Read its whole group now, settle it silently (as the catch-up would have), and report
        its transitions from now on."""
        group = history.take_group(stream)
        self._read_streams(group)
        keys = {s.session for s in group if s.session is not None}
        history.quiet -= keys
        history.live |= keys
        history.settling |= keys  # cleared by the batch's ``_settle_read`` or below

    def _finish_catch_up(self) -> None:
        """The last of the history is read: fold the sessions read out of order again in the
        serial order, bind and decide everything as a serial catch-up would, and say so."""
        history = self._history
        assert history is not None
        self._cold_hold.close()  # the workers go: what is left is read here, in a few files
        for key in history.split:
            if key in self._sessions:
                self._rebuild(key, order=history.serial_place)
        history.settling = set(history.split)
        self.processes.refresh()
        self._binder.check(full=True)
        for session in self._sessions:
            self._decide(session, report=self._reports(session.key))
        self._history = None
        self._caught_up = True
        self.live_ready.set()  # (already, unless the live phase failed half-way)
        self._writer.persist(index_now=False)
        self._publish(everything=True)
        self._set_progress(self._history_progress(history, done=True))
        self._last_full_rescan = self.clock.monotonic()
        with contextlib.suppress(sqlite3.Error):
            if self.index.search_backlog():
                self.post(IndexSearch())  # what the catch-up saved, in slices from now on
        self.ready.set()
        # Said once per start: what changes before this line is settled silently, what changes
        # after it is reported (`agentbar watch -v` readers wait for it).
        log.info("%s: %d sessions", CAUGHT_UP, len(self._board))

    def _history_progress(
        self, history: live_first.History | None = None, *, done: bool = False
    ) -> IndexProgress:
        history = history or self._history
        assert history is not None
        return IndexProgress(
            live_ready=True,
            done=done,
            files_done=history.files_total if done else history.files_done,
            files_total=history.files_total,
            bytes_done=history.bytes_total if done else history.bytes_done,
            bytes_total=history.bytes_total,
        )

    def _reports(self, key: SessionKey) -> bool:
        """Whether a transition of ``key`` is news now: always once caught up; while the
        history is read, only for the live sessions (and those new since the start)."""
        if self._caught_up:
            return True
        return self._history is not None and self._history.reports(key)

    def _load_index(self) -> None:
        self._writer.load()
        for session in self._sessions:  # the windows the sessions last named, kept with them
            self._limits.note(session.facts.limits)

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
        history = self._history
        for path in work.touched.values():
            stream = self.streams.lookup_or_add(path)
            if stream is None:
                continue
            if history is not None and history.waiting(stream.path):
                self._read_out_of_turn(history, stream)
                continue
            self._read(stream, budget=LIVE_STEP_BUDGET_BYTES)
        for folder in work.rescans:
            self._rescan(folder)
        if work.tick:
            self._on_tick()
        self._after_batch()
        if history is not None:
            history.settling = set()
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
                case TaskStarted() | TaskBound() | TaskScreen() | TaskExited():
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
        for session in candidates:
            if session.undecided or session.hold_until is not None:
                self._decide(session, report=self._reports(session.key))
        self._writer.persist(index_now=self._caught_up)
        self._publish()

    def _on_tick(self) -> None:
        self._read_claude_limits()
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
        history = self._history  # while it is read, its streams wait for their turn
        chosen = (
            new
            if folder is not None
            else [
                s
                for s in self.streams
                if (history is None or not history.waiting(s.path))
                and s.changed_on_disk() is not False
            ]
        )
        self._read_streams(chosen)

    def _read_streams(self, streams: Sequence[Stream], ahead: Sequence[Stream] = ()) -> None:
        """Read each of ``streams`` to its end, in this order (a cold catch-up reads almost
        every byte here): on every core when there is much to read (``cold_read``); the
        workers read on into ``ahead`` (the slices to come) while these are merged."""
        reads = self.cold.read(streams, self._sessions.keys(), ahead)
        with contextlib.closing(reads):
            for stream, read in reads:
                if read is None:
                    self._read(stream, budget=None)
                else:
                    self._take(stream, read)

    def _take(self, stream: Stream, read: FileRead) -> None:
        """What a worker read of ``stream``, merged as if this thread had read it."""
        owner = read.owner
        key = None if owner is None else SessionKey(stream.spec.agent, owner.session_id)
        session = self._sessions.get(key)
        if not (still_as_sent(stream, read) and read.records.foldable_into(session)):
            self._read(stream, budget=None)  # moved since, or its records were not sent
            return
        with self._guarded(stream, "merge what was read of"):
            adopt(stream, read)
            self._lines += read.lines
            self._bytes += read.bytes_read
            if read.records or owner is not None:
                self._apply(stream, owner, read.records, read.search)

    def _note_read(self, stream: Stream) -> None:
        """Each stream read once in the session's reading order, however it came to be read
        (a slice, a worker, a file event, a tick): noting one twice would split its session."""
        if self._history is not None:
            self._history.note_read([stream])

    def _stat_hot_streams(self, sessions: Iterable[SessionRecord]) -> None:
        """Catch writes whose file events were dropped: stat the registries and the files of
        ``sessions`` (the warm ones: live, or written in the last hour; cheap); everything
        else waits for the full rescan (and the history's files still waiting, their turn)."""
        history = self._history
        hot = [
            path
            for session in sessions
            for path in session.streams
            if history is None or not history.waiting(path)
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
            self._apply(new.stream, new.owner, new.records, _search_rows(new.records))

    def _read_if_changed(self, stream: Stream) -> None:
        if stream.changed_on_disk() is not False:
            self._read(stream, budget=None)

    def _read(self, stream: Stream, budget: int | None) -> None:
        with self._guarded(stream, "read"):
            self._read_unguarded(stream, budget)

    @contextlib.contextmanager
    def _guarded(self, stream: Stream, doing: str) -> Iterator[None]:
        """Read or merge ``stream`` in the block: an adapter bug on one odd file must not stop
        the others from being read. Then keep the cold staging small and note the reading."""
        try:
            yield
        except Exception as exc:
            log.exception("failed to %s %s", doing, stream.path)
            stream.last_error = f"internal error: {exc!r}"
            self._unreadable += 1
        self._stage_if_cold()
        self._note_read(stream)

    def _stage_if_cold(self) -> None:
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
        records: list[Record] | FoldedRecords,
        search: list[SearchEntry] | None = None,
    ) -> None:
        """Fold a stream's new ``records`` into its session (``FoldedRecords``: as a worker
        read and folded them)."""
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
            and (
                records.conversational
                if isinstance(records, FoldedRecords)
                else conversational(records)
            )
        ):
            # A file of bookkeeping alone is no conversation (Claude 2.0.x's resume leaves one
            # with just a summary line under a fresh id): it makes no session of its own.
            session.transcript = stream.path
            session.mark()
        if not records:
            return
        if isinstance(records, FoldedRecords):
            records.fold_into(session)  # a transcript's: no hook events go to the workers
        else:
            if stream.spec.kind is StreamKind.HOOKS:
                traits = self.traits.get(session.key.agent, UNKNOWN_TRAITS)
                session.hooks = hooks.reduce_all(session.hooks, records, traits)
            else:
                session.turn = turns.reduce_all(session.turn, records)
            session.facts = facts_mod.fold_all(session.facts, records)  # times: hooks too
        self._limits.note(session.facts.limits)
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

    def _rebuild(self, key: SessionKey, order: Callable[[str], Any] = str) -> None:
        """Fold the session again from the top of every one of its files (in ``order``)."""
        session = self._sessions[key]
        session.turn, session.facts, session.hooks = TurnState(), SessionFacts(), HookState()
        self._sessions.changed(session)
        paths = sorted(session.streams, key=order)
        for path in paths:
            stream = self.streams.get(path)
            if stream is not None:
                stream.restart()
                stream.session = key
        for path in paths:
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
            # Told by ``_publish``, after the state it announces is there for every reader.
            self._untold.append(
                StateChange(ts=now, snapshot=self._board.snapshot(session), prev=previous)
            )

    def _notify(self, change: StateChange) -> None:
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:
                log.exception("a state-change subscriber failed")

    def _publish(self, *, everything: bool = False) -> None:
        """Publish the batch's state, then tell its changes: publishing first means a
        subscriber that re-reads ``sessions()`` (the tray, the board) never sees the state from
        before the change it was just told of."""
        # Everything once, at the first publish (the sessions loaded from the index were never
        # marked); then what changed.
        self._board.publish(everything=everything or not self.live_ready.is_set())
        untold, self._untold = self._untold, []
        for change in untold:
            self._notify(change)

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


def _ignored(stream: Stream) -> bool:
    """A transcript read that names no session (``Engine.ignored_files``)."""
    return (
        stream.spec.kind is StreamKind.TRANSCRIPT
        and stream.size > 0
        and stream.parser.owner is None
    )
