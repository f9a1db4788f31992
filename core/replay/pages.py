"""A session's transcript as pages of replay items, read by byte ranges (any thread but the
engine's: the server runs these in a worker thread).

Cursors are byte offsets into the thread's file: ``after=X`` reads the complete lines from the
line start ``X`` forward, ``before=X`` the complete lines that end at or before ``X``, and no
cursor reads the last page (the replay opens at the end). A page stops at ``limit`` items or
once about ``PAGE_BYTES`` of lines were read, whichever comes first, always on a line boundary;
transcripts are append-only, so offsets stay valid while the agent writes on. A 50 MB
transcript is never read whole: a page costs its own bytes plus a few lines of context before it
(so split copies of one response count their usage once).

Threads: ``main`` is the session's transcript; a sub-agent with a file of its own is named by
its agent id (the engine's ``SessionSnapshot.threads``); a Claude 1.0 sub-agent written inline
is ``inline:<offset of its first line>``. Files come only from the engine's snapshot, opened
through ``AgentRoots`` (real path inside an agent root), never from a request.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from ..errors import ReplayError
from ..model import Agent, SessionSnapshot, State, WaitingFor
from .files import AgentRoots, Line, OutsideRoots, TranscriptFile
from .model import (
    INLINE_PREFIX,
    MAIN_THREAD,
    MESSAGE_CHARS,
    DescribesSpawns,
    Focus,
    ItemKind,
    Page,
    RendersTranscript,
    ReplayAdapter,
    ReplayItem,
    ReplayParser,
    Spawns,
    ThreadCatalog,
    ThreadInfo,
)

log = logging.getLogger(__name__)

FAILURE_LOG_LIMIT = 20  # adapter failures logged with a traceback, per process
_failures = itertools.count(1)  # thread-safe enough: next() on a count holds the GIL

PAGE_ITEMS = 200
MAX_PAGE_ITEMS = 1000
PAGE_BYTES = 256 * 1024
CONTEXT_LINES = 8
CONTEXT_BYTES = 64 * 1024
BACKWARD_BATCH_LINES = 64
CACHE_ENTRIES = 256


class _Ends:
    """Where the lines an iterator gave so far end."""

    def __init__(self) -> None:
        self.end = 0

    def track(self, lines: Iterator[Line]) -> Iterator[Line]:
        for line in lines:
            self.end = line.end
            yield line


class NotFound(ReplayError):
    """No such thread, item or transcript (or it may not be read): the server answers 404."""

    title = "No such session part"


@dataclass(frozen=True, slots=True)
class _Thread:
    """Where a thread's lines are: a whole file, or the listed lines of the main file."""

    thread: str
    path: str
    main: bool
    members: tuple[int, ...] | None = None  # inline thread: offsets of its lines


class Replay:
    """Pages, whole items and every item of a session's threads."""

    def __init__(self, roots: AgentRoots, adapters: Mapping[Agent, ReplayAdapter]) -> None:
        """``adapters``: each agent's (``Settings.replay_adapters()``); an agent without one
        cannot be replayed (``NotFound``)."""
        self.roots = roots
        self.adapters = dict(adapters)
        self._lock = threading.Lock()
        self._infos: OrderedDict[str, ThreadInfo] = OrderedDict()
        self._inline: OrderedDict[tuple[str, int, int], tuple[int, ...]] = OrderedDict()
        self._spawn_scans: OrderedDict[str, tuple[int, Spawns]] = OrderedDict()

    # -- threads ---------------------------------------------------------------------------

    def threads(self, snap: SessionSnapshot) -> list[ThreadInfo]:
        """The session's sub-agent threads with files of their own, oldest first, each named
        by its own file or else by the call that spawned it."""
        adapter = self._adapter(snap)
        infos = []
        for thread, path in snap.threads:
            info = self._cached_info(path)
            if info is None:
                info = self._read_info(adapter, thread, path)
                if info is None:
                    continue
            infos.append(info)
        if any(not t.description for t in infos):
            spawns = self._spawns(snap, adapter)
            infos = [spawns.describe(t) for t in infos]
        infos.sort(key=lambda t: (t.started_at or 0.0, t.thread))
        return infos

    def _spawns(self, snap: SessionSnapshot, adapter: ReplayAdapter) -> Spawns:
        """What the main transcript's spawning calls said, read once and then only what was
        appended since (transcripts only grow)."""
        path = snap.transcript
        if not path or not isinstance(adapter, DescribesSpawns):
            return Spawns()
        with self._lock:
            end, known = self._spawn_scans.get(path, (0, Spawns()))
        read = _Ends()
        try:
            with self.roots.open(path) as file:
                if end > file.complete:
                    end, known = 0, Spawns()  # the file was replaced by a shorter one
                more = adapter.spawns(read.track(file.all_lines(end)))
        except (OutsideRoots, OSError):
            return known
        known = known + more
        with self._lock:
            self._spawn_scans[path] = (max(end, read.end), known)
            while len(self._spawn_scans) > CACHE_ENTRIES:
                self._spawn_scans.popitem(last=False)
        return known

    def _cached_info(self, path: str) -> ThreadInfo | None:
        with self._lock:
            return self._infos.get(path)

    def _read_info(self, adapter: ReplayAdapter, thread: str, path: str) -> ThreadInfo | None:
        stem = path[: -len(".jsonl")] if path.endswith(".jsonl") else path

        def read_side(suffix: str) -> bytes | None:
            return self.roots.read_small(stem + suffix)

        try:
            with self.roots.open(path) as file:
                info = adapter.thread_info(thread, file.all_lines(), read_side)
        except (OutsideRoots, OSError):
            return None
        if info.first_prompt or info.description:  # settled: the file's head will not change
            with self._lock:
                self._infos[path] = info
                while len(self._infos) > CACHE_ENTRIES * 16:
                    self._infos.popitem(last=False)
        return info

    def catalog(self, snap: SessionSnapshot) -> ThreadCatalog:
        return ThreadCatalog.of(tuple(self.threads(snap)))

    def _thread(self, snap: SessionSnapshot, thread: str) -> _Thread:
        if thread == MAIN_THREAD:
            if not snap.transcript:
                raise NotFound("the session has no transcript")
            return _Thread(MAIN_THREAD, snap.transcript, main=True)
        for name, path in snap.threads:
            if name == thread:
                return _Thread(thread, path, main=False)
        raise NotFound(f"no thread {thread!r} in this session")

    # -- pages -----------------------------------------------------------------------------

    def page(
        self,
        snap: SessionSnapshot,
        thread: str = MAIN_THREAD,
        *,
        before: int | None = None,
        after: int | None = None,
        limit: int = PAGE_ITEMS,
    ) -> Page:
        limit = max(1, min(limit, MAX_PAGE_ITEMS))
        with self._open(snap, thread) as (file, where):
            parser = self._parser(snap, file, where)
            if where.members is not None:
                page = _member_page(file, where, parser, before=before, after=after, limit=limit)
            elif after is not None:
                page = _forward_page(file, where, parser, after, limit)
            else:
                stop = file.complete if before is None else before
                page = self._backward_page(snap, file, where, stop, limit)
        if before is None and after is None and thread == MAIN_THREAD:
            page = _with_focus(page, snap)
        return page

    def _backward_page(
        self,
        snap: SessionSnapshot,
        file: TranscriptFile,
        where: _Thread,
        stop: int,
        limit: int,
    ) -> Page:
        """The last lines before ``stop`` holding up to ``limit`` items: counted batch by batch
        going back, then parsed once more in file order with their context."""
        end = file.line_end_before(stop)
        lines: list[Line] = []
        counts: list[int] = []
        seen = 0
        pos = end
        while pos > 0 and sum(counts) < limit and seen < PAGE_BYTES:
            batch = file.lines_before(pos, max_lines=BACKWARD_BATCH_LINES, max_bytes=PAGE_BYTES)
            if not batch:
                break
            counter = self._parser(snap, file, where)
            lines[:0] = batch
            counts[:0] = [len(_line_items(counter, line)) for line in batch]
            seen += sum(line.length + 1 for line in batch)
            pos = batch[0].offset
        while len(lines) > 1 and sum(counts) - counts[0] >= limit:
            del lines[0], counts[0]
        start = lines[0].offset if lines else end
        parser = self._parser(snap, file, where)
        _prime(parser, file, start)
        items = [item for line in lines for item in _line_items(parser, line)]
        return _page(where, items, start, end, file.complete)

    def item(self, snap: SessionSnapshot, thread: str, offset: int, index: int) -> ReplayItem:
        """One item whole (no text cut), by the offset of its line and its index there."""
        with self._open(snap, thread) as (file, where):
            if where.members is not None and offset not in where.members:
                raise NotFound("no such line in this thread")
            line = file.line_at(offset)
            if line is None:
                raise NotFound("no line starts at this offset")
            parser = self._parser(snap, file, where)
            if where.members is None:
                _prime(parser, file, offset)
            items = _line_items(parser, line)
        if not 0 <= index < len(items):
            raise NotFound("no such item on this line")
        return items[index]

    def items(self, snap: SessionSnapshot, thread: str = MAIN_THREAD) -> Iterator[ReplayItem]:
        """Every item of a thread, whole, in file order (export)."""
        with self._open(snap, thread) as (file, where):
            parser = self._parser(snap, file, where)
            if where.members is not None:
                for offset in where.members:
                    line = file.line_at(offset)
                    if line is not None:
                        yield from _line_items(parser, line)
                return
            for line in file.all_lines():
                yield from _line_items(parser, line)

    # -- plumbing --------------------------------------------------------------------------

    def _open(self, snap: SessionSnapshot, thread: str) -> _OpenThread:
        return _OpenThread(self, snap, thread)

    def _resolve(self, snap: SessionSnapshot, thread: str) -> tuple[TranscriptFile, _Thread]:
        inline = thread.startswith(INLINE_PREFIX)
        where = self._thread(snap, MAIN_THREAD if inline else thread)
        adapter: object = self.adapters.get(snap.key.agent)  # it may render, as well
        try:
            if isinstance(adapter, RendersTranscript):  # a session kept in a database
                file = adapter.transcript(where.path, self.roots)
            else:
                file = self.roots.open(where.path)
        except OutsideRoots as exc:
            raise NotFound(str(exc)) from None
        except OSError as exc:
            raise NotFound(f"cannot read the transcript: {exc.strerror or exc}") from None
        if not inline:
            return file, where
        try:
            members = self._inline_members(snap, file, thread)
        except BaseException:
            file.close()
            raise
        return file, _Thread(thread, where.path, main=False, members=members)

    def _inline_members(
        self, snap: SessionSnapshot, file: TranscriptFile, thread: str
    ) -> tuple[int, ...]:
        text = thread[len(INLINE_PREFIX) :]
        if not text.isdigit() or len(text) > 18:
            raise NotFound(f"no thread {thread!r} in this session")
        root_at = int(text)
        key = (file.path, root_at, file.complete)
        with self._lock:
            cached = self._inline.get(key)
        if cached is not None:
            return cached
        root = file.line_at(root_at)
        found = (
            None
            if root is None
            else self._adapter(snap).inline_thread(root, file.all_lines(root.end))
        )
        if not found:
            raise NotFound(f"no thread {thread!r} in this session")
        members = tuple(found)
        with self._lock:
            self._inline[key] = members
            while len(self._inline) > CACHE_ENTRIES:
                self._inline.popitem(last=False)
        return members

    def _adapter(self, snap: SessionSnapshot) -> ReplayAdapter:
        adapter = self.adapters.get(snap.key.agent)
        if adapter is None:
            raise NotFound(f"agentbar cannot replay {snap.key.agent} sessions")
        return adapter

    def _parser(self, snap: SessionSnapshot, file: TranscriptFile, where: _Thread) -> ReplayParser:
        adapter = self._adapter(snap)
        catalog = self.catalog(snap) if where.main else ThreadCatalog()
        return adapter.parser(file.path, catalog, thread=where.thread, main=where.main)


class _OpenThread:
    """``with replay._open(snap, thread) as (file, where)``: the thread's file, closed after."""

    def __init__(self, replay: Replay, snap: SessionSnapshot, thread: str) -> None:
        self._replay = replay
        self._snap = snap
        self._thread = thread
        self._file: TranscriptFile | None = None

    def __enter__(self) -> tuple[TranscriptFile, _Thread]:
        file, where = self._replay._resolve(self._snap, self._thread)
        self._file = file
        return file, where

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()


def _page(where: _Thread, items: list[ReplayItem], start: int, end: int, size: int) -> Page:
    """A page of ``items``, their long texts cut."""
    return Page(
        thread=where.thread,
        items=tuple(item.cut() for item in items),
        start=start,
        end=end,
        size=size,
    )


def _line_items(parser: ReplayParser, line: Line) -> list[ReplayItem]:
    """The items of one line; a line the adapter fails on becomes one unknown item with its raw
    text, so a page never fails for one line."""
    try:
        if line.oversized:
            return parser.oversized(line.data, line.length, line.offset)
        return parser.items(line.data, line.offset)
    except Exception as exc:  # an adapter bug, or a value it did not expect
        failures = next(_failures)
        if failures <= FAILURE_LOG_LIMIT:  # a hostile file viewed again must not flood the log
            log.exception("replay: the adapter failed on the line at %d", line.offset)
        text = line.data[: MESSAGE_CHARS * 4].decode("utf-8", "replace")
        return [
            ReplayItem(
                kind=ItemKind.UNKNOWN,
                offset=line.offset,
                text=text,
                chars=len(text),
                name=f"unreadable: {type(exc).__name__}",
                line_bytes=line.length,
            )
        ]


def _prime(parser: ReplayParser, file: TranscriptFile, start: int) -> None:
    """Let the parser see the few lines before a page (their items are dropped)."""
    if start <= 0:
        return
    for line in file.lines_before(start, max_lines=CONTEXT_LINES, max_bytes=CONTEXT_BYTES):
        if line.length <= CONTEXT_BYTES:
            _line_items(parser, line)


def _forward_page(
    file: TranscriptFile, where: _Thread, parser: ReplayParser, after: int, limit: int
) -> Page:
    start = file.line_start(after)
    _prime(parser, file, start)
    items: list[ReplayItem] = []
    end = start
    seen = 0
    for line in file.lines_after(start, max_lines=1 << 30, max_bytes=1 << 62):
        items.extend(_line_items(parser, line))
        end = line.end
        seen += line.length + 1
        if len(items) >= limit or seen >= PAGE_BYTES:
            break
    else:
        end = file.complete
    return _page(where, items, start, end, file.complete)


def _member_page(
    file: TranscriptFile,
    where: _Thread,
    parser: ReplayParser,
    *,
    before: int | None,
    after: int | None,
    limit: int,
) -> Page:
    """A page of an inline thread: its listed lines, forward from ``after`` or back from
    ``before`` (the last ones by default)."""
    members = where.members or ()
    if after is not None:
        chosen = [m for m in members if m >= after]
    else:
        stop = file.complete if before is None else before
        chosen = [m for m in members if m < stop]
    lines = [line for m in chosen if (line := file.line_at(m)) is not None]
    per_line = [_line_items(parser, line) for line in lines]
    if after is not None:
        keep, total = 0, 0
        while keep < len(lines) and total < limit:
            total += len(per_line[keep])
            keep += 1
        lines, per_line = lines[:keep], per_line[:keep]
    else:
        drop, total = len(lines), 0
        while drop > 0 and total < limit:
            drop -= 1
            total += len(per_line[drop])
        lines, per_line = lines[drop:], per_line[drop:]
    size = max((file.line_at(m) or Line(m, 0, b"")).end for m in members) if members else 0
    start = lines[0].offset if lines else (after or 0)
    end = lines[-1].end if lines else start
    items = [item for group in per_line for item in group]
    return _page(where, items, start, end, size)


def _with_focus(page: Page, snap: SessionSnapshot) -> Page:
    """Mark the item that needs the user on the last page of a session waiting for input: the
    call still waiting for its result, or else the last answer (a question)."""
    state = snap.state
    if state.state is not State.INPUT_REQUIRED:
        return page
    pending: dict[str, ReplayItem] = {}
    last_answer: ReplayItem | None = None
    for item in page.items:
        if item.kind is ItemKind.TOOL_CALL and item.call_id and item.agent_id is None:
            pending[item.call_id] = item
        elif item.kind is ItemKind.TOOL_RESULT and item.call_id:
            pending.pop(item.call_id, None)
        elif item.kind is ItemKind.ASSISTANT and item.agent_id is None:
            last_answer = item
    reason = str(state.waiting_for or WaitingFor.APPROVAL)
    target = list(pending.values())[-1] if pending else last_answer
    if target is None:
        return page
    return replace(page, focus=Focus(offset=target.offset, index=target.index, reason=reason))
