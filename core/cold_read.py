"""Reading many transcripts at once on every core: a cold catch-up's files parsed in worker
processes and handed back in the serial order (engine thread; the workers are processes of
their own, started for one cold read and shut down after it).

``ColdReader.read(streams)`` yields each stream with what a worker made of it (a ``FileRead``)
or None: the engine then reads that stream itself, as it always did. A worker reads a file with
the very code the engine uses (``StreamTable.read``), starting from the stream's cursor and its
parser's checkpoint, to the end of the file. It sends back the stream's new position (a cursor:
the reader is left closed, as after the stream table's own eviction, and an unfinished last line
is read again from the file by the next read), the parser's checkpoint, the counters, the search
rows, and the records folded into an empty turn and facts (``FoldedRecords``). The records
themselves are pickled only when the worker or the engine expects that the session will not be
empty when they are applied (a sub-agent's file, a second file of a session): unpickling every
record of a large history costs the engine thread more than folding them.

A file goes back to the engine thread, untouched, whenever the worker's read is anything but
plain (a reset, a file gone, a read error, a log line it would have written: malformed or
oversized lines, an adapter bug), so the serial read logs and counts it exactly as before. A
worker that dies, or a pool that cannot start, sends every file not yet merged the same way
(said once in the log). Results are merged in the order of ``streams``; at most
``WINDOW_BYTES`` of files are in flight, so what waits in memory stays bounded whatever the
history's size.

Workers are started with 'spawn' on every platform: never a plain fork of a process that has
threads (watchdog's, the server's), and the same on Windows and macOS, where it is the default.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import facts as facts_mod
from .facts import SessionFacts
from .model import SessionKey
from .records import Record, conversational
from .search import SearchEntry
from .session_record import SessionRecord
from .sources.base import AgentSource, Owner, StreamKind, StreamSpec
from .state import turns
from .state.turns import TurnState
from .streams import Stream, StreamTable
from .tail import Cursor

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

log = logging.getLogger(__name__)

# Below this many bytes to read, starting processes costs more than it saves: a spawned worker
# takes 0.2-0.25 s of a core to start and one core parses ~150 MB/s; on two cores 96 MB read
# faster serially (0.8 s against 0.9 s), 160 MB on workers (0.89 s against 1.05-1.13 s).
POOL_MIN_BYTES = 128 * 1024 * 1024
# With workers already running (``held``), only handing the files over is left to pay for.
HELD_MIN_BYTES = 8 * 1024 * 1024
POOL_MIN_FILES = 4
WINDOW_BYTES = 256 * 1024 * 1024  # bytes of files handed to workers and not yet merged
TASK_BYTES = 8 * 1024 * 1024  # small files go to a worker together, up to this many bytes
TASK_FILES = 64
WORKERS_ENV = "AGENTBAR_READ_WORKERS"  # 0 or 1: read serially; unset: every core

# A source says its parsers' checkpoint is their whole state with this attribute set True: a
# worker's parser is rebuilt from the checkpoint, so a parser keeping anything else (or hook
# events, whose reducer is not the transcript's) stays on the engine thread.
CHECKPOINT_IS_STATE = "checkpoint_is_state"
_POOLED_KINDS = frozenset({StreamKind.TRANSCRIPT, StreamKind.SUBAGENT})
_EMPTY_TURN = TurnState()
_EMPTY_FACTS = SessionFacts()


def default_workers() -> int:
    """The processes a cold read uses: ``AGENTBAR_READ_WORKERS``, else one per usable core."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured.isdigit():
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# -- what goes to a worker and back ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileTask:
    """One file for a worker: where its stream stands."""

    source: int  # index into the sources the worker was started with
    spec: StreamSpec
    cursor: Cursor
    checkpoint: dict[str, Any]
    session: SessionKey | None
    counters: tuple[int, ...]  # malformed .. bugs, as in ``Stream``
    last_error: str | None
    keep_records: bool  # the engine expects the session to hold something already


@dataclass(slots=True)
class FoldedRecords:
    """A file's records as a worker folded them into an empty turn and empty facts; the
    records themselves (pickled) only when asked for or when the file is a sub-agent's or
    names another session than its path does."""

    count: int
    conversational: bool  # a record that is not bookkeeping, a title or unknown
    turn: TurnState
    facts: SessionFacts
    pickled: bytes | None

    def __len__(self) -> int:
        return self.count

    def foldable_into(self, session: SessionRecord | None) -> bool:
        """Whether these records can be folded into ``session`` as it is now."""
        return self.pickled is not None or session is None or _empty(session)

    def fold_into(self, session: SessionRecord) -> None:
        """Fold into a transcript's session what the serial read's ``reduce_all`` and
        ``fold_all`` would: the worker's result when the session is still empty."""
        if _empty(session):
            session.turn, session.facts = self.turn, self.facts
            return
        assert self.pickled is not None, "foldable_into said no"
        records: list[Record] = pickle.loads(self.pickled)
        session.turn = turns.reduce_all(session.turn, records)
        session.facts = facts_mod.fold_all(session.facts, records)


def _empty(session: SessionRecord) -> bool:
    # (Hook events fold into the facts too: a session with some has facts already.)
    return session.turn == _EMPTY_TURN and session.facts == _EMPTY_FACTS


@dataclass(slots=True)
class FileRead:
    """What a worker made of one file: the stream's new state and what it read."""

    started: tuple[Cursor, tuple[int, ...]]  # the stream as it was sent
    cursor: Cursor
    size: int
    mtime_ns: int
    checkpoint: dict[str, Any]
    counters: tuple[int, ...]
    last_error: str | None
    owner: Owner | None
    lines: int
    bytes_read: int
    records: FoldedRecords
    search: list[SearchEntry]


def still_as_sent(stream: Stream, read: FileRead) -> bool:
    """Whether ``stream`` is where it was when its file went to a worker (a session rebuilt
    since, by an earlier file's merge, restarts its streams: then the engine reads it)."""
    return stream.reader is None and read.started == (stream.cursor, _counters(stream))


def _unchanged_since(read: FileRead | None, stream: Stream) -> FileRead | None:
    """A read handed out ahead, when its file has not changed since: a file event served
    meanwhile (the engine reads a stream of the next slice out of turn) must see the new
    lines, not a worker's read from before they were written."""
    if read is None:
        return None
    try:
        st = os.stat(stream.spec.path)
    except OSError:
        return None
    return read if (st.st_size, st.st_mtime_ns) == (read.size, read.mtime_ns) else None


# What a stream counts of the odd lines it read (a worker's counts replace the engine's).
_COUNTERS = ("malformed", "oversized", "unknown", "odd_times", "clamped", "bugs")


def _counters(stream: Stream) -> tuple[int, ...]:
    return tuple(getattr(stream, name) for name in _COUNTERS)


def adopt(stream: Stream, read: FileRead) -> None:
    """Leave ``stream`` where the serial read of the same bytes would have left it."""
    seen_before = (stream.size, stream.mtime_ns)
    assert stream.reader is None, "only streams without an open reader are read elsewhere"
    stream.cursor = read.cursor
    stream.parser = stream.source.parser(stream.spec, read.checkpoint)
    stream.size, stream.mtime_ns = read.size, read.mtime_ns
    for name, count in zip(_COUNTERS, read.counters, strict=True):
        setattr(stream, name, count)
    stream.last_error = read.last_error
    if read.bytes_read or (stream.size, stream.mtime_ns) != seen_before:
        stream.unsaved = True


# -- the worker's side ------------------------------------------------------------------------


class _Worker:
    """A worker process's sources and stream table (one per process)."""

    def __init__(self, sources: list[AgentSource], max_line_bytes: int) -> None:
        self.sources = sources
        self.table = StreamTable([], max_line_bytes=max_line_bytes, max_open=1)
        self.logged = _LogFlag()
        root = logging.getLogger()
        root.handlers[:] = [self.logged]
        root.setLevel(logging.WARNING)


class _LogFlag(logging.Handler):
    """Notes that the read being done would have written to the log."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.raised = False

    def emit(self, record: logging.LogRecord) -> None:
        self.raised = True


_WORKER: list[_Worker] = []  # this process's, once the pool's initializer ran


def _start_worker(sources: list[AgentSource], max_line_bytes: int) -> None:
    _WORKER[:] = [_Worker(sources, max_line_bytes)]


def _read_files(tasks: list[FileTask]) -> list[FileRead | None]:
    """A worker's task: each file read to its end (None: the engine must read it itself)."""
    (worker,) = _WORKER  # the pool's initializer made it
    return [_read_file(worker, task) for task in tasks]


def _read_file(worker: _Worker, task: FileTask) -> FileRead | None:
    source = worker.sources[task.source]
    malformed, oversized, unknown, odd_times, clamped, bugs = task.counters
    stream = Stream(
        spec=task.spec,
        source=source,
        parser=source.parser(task.spec, task.checkpoint),
        cursor=task.cursor,
        session=task.session,
        malformed=malformed,
        oversized=oversized,
        unknown=unknown,
        odd_times=odd_times,
        clamped=clamped,
        bugs=bugs,
        last_error=task.last_error,
    )
    worker.logged.raised = False
    outcome = worker.table.read(stream, None)
    worker.table.close(stream)
    if (
        outcome.reset
        or outcome.gone
        or outcome.more
        or outcome.failed
        or worker.logged.raised
        or stream.reader is not None
    ):
        return None
    checkpoint = stream.parser.checkpoint()
    if source.parser(task.spec, checkpoint).checkpoint() != checkpoint:
        return None  # not all of its state is in its checkpoint: the engine reads it
    records = outcome.records
    owner = outcome.owner
    keep = task.keep_records or (
        owner is not None
        and (owner.agent_id is not None or owner.session_id != task.spec.session_hint)
    )
    folded = FoldedRecords(
        count=len(records),
        conversational=conversational(records),
        turn=turns.reduce_all(_EMPTY_TURN, records),
        facts=facts_mod.fold_all(_EMPTY_FACTS, records),
        pickled=pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL) if keep else None,
    )
    return FileRead(
        started=(task.cursor, task.counters),
        cursor=stream.cursor,
        size=stream.size,
        mtime_ns=stream.mtime_ns,
        checkpoint=checkpoint,
        counters=_counters(stream),
        last_error=stream.last_error,
        owner=owner,
        lines=outcome.lines,
        bytes_read=outcome.bytes_read,
        records=folded,
        search=outcome.search,
    )


# -- the engine's side ------------------------------------------------------------------------


@dataclass(slots=True)
class _Planned:
    streams: list[Stream]
    tasks: list[FileTask]
    bytes: int
    future: Future[list[FileRead | None]] | None = None
    reads: list[FileRead | None] | None = None  # its results, once taken
    ahead: bool = False  # of the next read's streams


@dataclass(slots=True)
class _Fetched:
    """A stream of this read already handed to a worker by the read before it (``ahead``)."""

    stream: Stream
    batch: _Planned
    at: int  # its place in the batch


class _Later:
    """The streams to hand out once a read's own are, planned a batch at a time as the window
    lets them go (``at``: the first not planned yet)."""

    def __init__(self, streams: Sequence[Stream]) -> None:
        self.streams = list(streams)
        self.at = 0


class ColdReader:
    """Reads a list of streams on every core when there is enough to read (engine thread)."""

    def __init__(self, sources: Sequence[AgentSource], *, max_line_bytes: int) -> None:
        # Only the sources whose files workers read go to them (the others need not pickle).
        self.sources = [s for s in sources if getattr(s, CHECKPOINT_IS_STATE, False) is True]
        self.max_line_bytes = max_line_bytes
        self.workers = default_workers()
        self.min_bytes = POOL_MIN_BYTES
        self.min_bytes_held = HELD_MIN_BYTES
        self.min_files = POOL_MIN_FILES
        self.window_bytes = WINDOW_BYTES
        self.task_bytes = TASK_BYTES
        self.task_files = TASK_FILES
        self.merged = 0  # files read by workers (since start; for the diagnostics and tests)
        self.merged_ahead = 0  # of which handed out by the read before (``ahead``)
        self._warned = False
        self._pool: ProcessPoolExecutor | None = None
        self._tracker_was_running = True
        self._holds = 0
        self._expected = 0  # bytes the reads of a ``held`` block take together
        self._in_flight = 0  # bytes handed to workers whose results are not taken yet
        # Streams of the next reads already handed to workers (by id: the stream, its batch).
        self._ahead: dict[int, _Fetched] = {}
        # Sessions claimed by a file handed out and not merged yet, kept from one read to the
        # next while the pool is held: a file of the same session read ahead in a later
        # read then sends its records (else it would be read again on this thread).
        self._claimed: set[SessionKey] = set()

    @contextlib.contextmanager
    def held(self, expected_bytes: int = 0) -> Iterator[None]:
        """Keep the workers one read starts for the reads that follow, until the block ends: a
        catch-up that reads its history in parts pays their start once. (Without it, each read
        shuts its workers down when it ends.) ``expected_bytes``: what the reads in the block
        take together; when that is worth a pool, the first part starts one, however small it
        is by itself."""
        self._holds += 1
        self._expected = max(self._expected, expected_bytes)
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self._expected = 0
                self._close()

    def read(
        self, streams: Sequence[Stream], sessions: Any = None, ahead: Sequence[Stream] = ()
    ) -> Generator[tuple[Stream, FileRead | None], None, None]:
        """Each of ``streams`` in order, with what a worker read of it, or None when the
        caller must read it itself (small reads, streams the pool does not take, failures).
        ``sessions`` (keys the engine knows) says which files' records will be wanted.
        ``ahead``: the streams the next reads will likely ask for, in their order (a held
        pool's history still to come): handed to the workers once this read's are, as far as
        the window lets them go, so that they keep reading while the engine merges and settles
        this one (a read of them that is stale by then is noticed at the merge, as any
        other). Those handed out and not in ``ahead`` are dropped at the end; a read without
        ``ahead`` (a file event's) keeps them for the next."""
        pooled = self._plan(streams, set(sessions or ()))
        if pooled is None:
            for stream in streams:
                yield stream, None
            return
        yield from self._pooled(streams, pooled, ahead)

    def _plan(self, streams: Sequence[Stream], known: set[SessionKey]) -> dict[int, int] | None:
        """Which streams go to workers (index in ``streams`` -> bytes to read), or None when
        the read is too small for a pool."""
        worth_a_pool = self._pool is not None or self._expected >= self.min_bytes
        # A held pool takes a part of a large read however few files it has (one big file).
        fewest = 1 if worth_a_pool else self.min_files
        if self.workers < 2 or len(streams) < fewest:
            return None
        index = {id(source): n for n, source in enumerate(self.sources)}
        chosen = self._sizes(streams, index)
        total = sum(chosen.values())
        least = min(self.min_bytes, self.min_bytes_held) if worth_a_pool else self.min_bytes
        if total < least or len(chosen) < fewest:
            return None
        self._known = known
        self._source_index = index
        return chosen

    @staticmethod
    def _sizes(streams: Sequence[Stream], index: dict[int, int]) -> dict[int, int]:
        """The streams a worker can read (index in ``streams`` -> bytes to read)."""
        chosen: dict[int, int] = {}
        for n, stream in enumerate(streams):
            if (
                stream.reader is not None
                or stream.spec.kind not in _POOLED_KINDS
                or id(stream.source) not in index
            ):
                continue
            try:
                size = os.stat(stream.spec.path).st_size
            except OSError:
                continue  # gone: the serial read says so
            todo = max(0, size - stream.cursor.offset) if not stream.spec.compressed else size
            chosen[n] = todo
        return chosen

    def _task(self, stream: Stream, claimed: set[SessionKey]) -> FileTask:
        spec = stream.spec
        hinted = None if spec.session_hint is None else SessionKey(spec.agent, spec.session_hint)
        # The records are wanted when the session will hold something already: it is known,
        # or another file of this read claims it (a sub-agent's file names its parent).
        keep = hinted is None or hinted in self._known or hinted in claimed
        if hinted is not None:
            claimed.add(hinted)
        return FileTask(
            source=self._source_index[id(stream.source)],
            spec=spec,
            cursor=stream.cursor,
            checkpoint=stream.parser.checkpoint(),
            session=stream.session,
            counters=_counters(stream),
            last_error=stream.last_error,
            keep_records=keep,
        )

    def _batches(
        self, streams: Sequence[Stream], chosen: dict[int, int], claimed: set[SessionKey]
    ) -> list[_Planned | _Fetched | int]:
        """The read in order: batches of files for workers, streams handed to them already
        (``ahead`` of the read before), and indexes of streams the engine reads itself."""
        plan: list[_Planned | _Fetched | int] = []
        open_batch: _Planned | None = None
        for n, stream in enumerate(streams):
            todo = chosen.get(n)
            fetched = self._ahead.pop(id(stream), None)
            if fetched is not None and fetched.stream is stream:
                plan.append(fetched)
                open_batch = None
                continue
            if todo is None:
                plan.append(n)
                open_batch = None
                continue
            open_batch = self._join(open_batch, stream, todo, claimed, plan)
        return plan

    def _join(
        self,
        batch: _Planned | None,
        stream: Stream,
        todo: int,
        claimed: set[SessionKey],
        plan: list[Any],
        *,
        ahead: bool = False,
    ) -> _Planned:
        """``stream`` added to ``batch``, or to a new one appended to ``plan`` when it is full:
        the batch it is in."""
        if batch is None or not self._fits(batch, todo):
            batch = _Planned([], [], 0, ahead=ahead)
            plan.append(batch)
        batch.streams.append(stream)
        batch.tasks.append(self._task(stream, claimed))
        batch.bytes += todo
        return batch

    def _fits(self, batch: _Planned, todo: int) -> bool:
        """Whether a file of ``todo`` bytes still goes in ``batch``."""
        return batch.bytes + todo <= self.task_bytes and len(batch.streams) < self.task_files

    def _pooled(
        self, streams: Sequence[Stream], chosen: dict[int, int], ahead: Sequence[Stream]
    ) -> Iterator[tuple[Stream, FileRead | None]]:
        # (this read's and the ahead's files claim sessions; a held pool's, read after read)
        claimed: set[SessionKey] = self._claimed if self._holds else set()
        plan = self._batches(streams, chosen, claimed)
        self._warned = False  # said once per read
        pool = self._pool or self._start()
        if pool is None:
            for stream in streams:
                yield stream, None
            return
        to_hand = deque(step for step in plan if isinstance(step, _Planned))
        later = _Later(ahead)
        try:
            for step in plan:
                if isinstance(step, int):
                    yield streams[step], None
                    continue
                if isinstance(step, _Planned):
                    # Keep the workers fed up to the window before waiting on this batch.
                    self._hand_out(pool, to_hand, step, later, claimed)
                    for stream, read in zip(step.streams, self._results(step), strict=True):
                        self.merged += read is not None
                        yield stream, read
                    continue
                # (Results taken since free the window: the workers are kept fed meanwhile.)
                self._hand_out(pool, to_hand, None, later, claimed)
                read = _unchanged_since(self._results(step.batch)[step.at], step.stream)
                self.merged += read is not None
                self.merged_ahead += read is not None
                yield step.stream, read
            self._hand_out(pool, to_hand, None, later, claimed)  # the next read's, meanwhile
        finally:
            if ahead:
                self._forget_ahead({id(stream) for stream in ahead})
            if self._warned or not self._holds:
                self._close()  # (a pool that failed once is not used again)

    def _hand_out(
        self,
        pool: ProcessPoolExecutor,
        to_hand: deque[_Planned],
        waited: _Planned | None,
        later: _Later,
        claimed: set[SessionKey],
    ) -> None:
        """Hand batches to the workers, in order, while fewer than ``window_bytes`` wait to be
        merged (and at least up to ``waited``, the batch the engine waits on next); once this
        read's are all handed out, the ``ahead`` streams' batches follow."""
        while not self._warned:
            if (waited is None or waited.future is not None) and (
                self._in_flight >= self.window_bytes
            ):
                return
            if not to_hand:
                planned = self._plan_ahead(later, claimed)
                if planned is None:
                    return
                to_hand.append(planned)
            batch = to_hand.popleft()
            try:
                batch.future = pool.submit(_read_files, batch.tasks)
            except Exception as exc:  # a broken pool, a process that cannot start
                self._broken(f"could not hand files to a reading process ({exc})")
                return
            self._in_flight += batch.bytes
            if batch.ahead:  # noted once handed out: the next read takes its results
                for at, stream in enumerate(batch.streams):
                    self._ahead[id(stream)] = _Fetched(stream, batch, at)

    def _plan_ahead(self, later: _Later, claimed: set[SessionKey]) -> _Planned | None:
        """The next batch of the ``ahead`` streams a worker can read (but those handed out
        already), or None when none is left; the streams after it stay unplanned."""
        batch: _Planned | None = None
        while later.at < len(later.streams):
            stream = later.streams[later.at]
            handed = id(stream) in self._ahead
            size = None if handed else self._sizes([stream], self._source_index).get(0)
            if size is not None and batch is not None and not self._fits(batch, size):
                return batch  # the stream begins the next batch
            later.at += 1
            if size is not None:
                batch = self._join(batch, stream, size, claimed, [], ahead=True)
        return batch

    def _forget_ahead(self, wanted: set[int]) -> None:
        """Keep of the streams handed out ahead those in ``wanted``; a batch none of whose
        streams is kept gives its bytes back to the window (its result is never taken)."""
        kept = {key: fetched for key, fetched in self._ahead.items() if key in wanted}
        still = {id(fetched.batch) for fetched in kept.values()}
        for fetched in self._ahead.values():
            batch = fetched.batch
            if id(batch) not in still and batch.reads is None and batch.future is not None:
                batch.future.cancel()
                batch.reads = [None] * len(batch.streams)
                self._in_flight -= batch.bytes
        self._ahead = kept

    def _close(self) -> None:
        self._ahead.clear()
        self._claimed = set()
        self._in_flight = 0
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if self._warned:
            # A pool that failed: end its workers first. CPython 3.11 can wait forever on a
            # worker its clean-up never terminated (one started while a sibling was killed).
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    process.kill()
        pool.shutdown(wait=True, cancel_futures=True)
        if not self._tracker_was_running:
            from . import cold_pool  # noqa: PLC0415 - loaded by ``_start`` already

            cold_pool.stop_tracker()

    def _results(self, step: _Planned) -> list[FileRead | None]:
        if step.reads is not None:
            return step.reads
        step.reads = [None] * len(step.streams)
        if step.future is None:
            return step.reads
        self._in_flight -= step.bytes
        try:
            step.reads = step.future.result()
        except Exception as exc:
            if type(exc).__name__ == "BrokenProcessPool":
                self._broken("a reading process died")
            elif not self._warned:
                log.exception("a reading process failed on %d files", len(step.streams))
                self._warned = True
        return step.reads

    def _broken(self, why: str) -> bool:
        if not self._warned:
            log.warning("%s; reading the rest of the history on this thread", why)
            self._warned = True
        return True

    def _start(self) -> ProcessPoolExecutor | None:
        try:
            from . import cold_pool  # noqa: PLC0415 - multiprocessing only where it is used

            self._tracker_was_running = cold_pool.tracker_running()
            self._pool = cold_pool.start_pool(
                self.workers,
                _start_worker,
                (self.sources, self.max_line_bytes),
                # The agents' packages: a worker reads with their files modules and parsers,
                # not with their kits (replay, launch, hooks), most of its imports.
                bare={type(s).__module__.rpartition(".")[0] for s in self.sources},
            )
        except (
            ImportError,
            OSError,
            ValueError,
            RuntimeError,
            TypeError,  # a source that cannot be pickled for the workers (start_pool)
            AttributeError,
            pickle.PicklingError,
        ) as exc:
            self._broken(f"cannot start reading processes ({exc})")
            return None
        return self._pool
