"""Every file the engine reads, and reading one into records (engine thread).

A ``Stream`` is one file classified by an adapter: a transcript, a sub-agent's transcript or a
live registry. ``StreamTable`` finds them (scan and per-path), keeps at most ``max_open``
readers open (the hottest ones, so a rename is drained from the old file), and turns new lines
into records, counting what it had to skip. It never raises for a bad file.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .model import SessionKey
from .records import Record, Unknown
from .search import SEARCHABLE, SearchEntry, search_entry
from .sources.base import (
    ODD_VALUES,
    AgentSource,
    FolderCache,
    MalformedLine,
    Owner,
    RegistryEntry,
    StreamKind,
    StreamParser,
    StreamSpec,
    scan_source,
    walk_paths,
)
from .tail import (
    DEFAULT_MAX_LINE_BYTES,
    Cursor,
    FileTailer,
    LineReader,
    Oversized,
    UnreadableFile,
    WholeDocumentReader,
    ZstdFileReader,
)
from .unsaved import UNSAVED, UnsavedFlag, UnsavedRows

log = logging.getLogger(__name__)

READ_BUDGET_BYTES = 8 * 1024 * 1024  # per read call: bounds the memory of one batch of lines
MALFORMED_LOG_LIMIT = 3  # per stream, so one garbage file cannot flood the log
BUG_LOG_LIMIT = 3  # lines an adapter failed on, logged with their traceback per stream
UNKNOWN_LOG_LIMIT = 3  # records of unknown type named in the log per stream (all are counted)


@dataclass(eq=False)
class Stream:
    spec: StreamSpec
    source: AgentSource
    parser: StreamParser
    cursor: Cursor = field(default_factory=Cursor.start)  # where a closed reader resumes
    reader: LineReader | None = None
    session: SessionKey | None = None
    agent_id: str | None = None
    size: int = -1  # at the last read, to notice changes a dropped event hid
    mtime_ns: int = -1
    malformed: int = 0
    oversized: int = 0
    unknown: int = 0
    odd_times: int = 0  # timestamps that name no representable moment (read as none)
    clamped: int = 0  # numbers out of range, clamped (token counts)
    bugs: int = 0  # lines the adapter failed on (kept as unknown; this run only, for the log)
    last_error: str | None = None
    registry: RegistryEntry | None = None  # the last good content of a registry file
    unsaved: UnsavedFlag = UNSAVED  # its row differs from the index
    # Search rows read since the last save (offset of the line, kind, ts, text), and whether
    # the stream's rows in the search index must go first (it is read again).
    search: list[SearchEntry] = field(default_factory=list)
    search_reset: bool = False
    search_moved: bool = False  # its session changed: re-file the rows already saved

    @property
    def path(self) -> str:
        return str(self.spec.path)

    @property
    def position(self) -> Cursor:
        return self.reader.cursor if self.reader is not None else self.cursor

    def changed_on_disk(self) -> bool | None:
        """True when size or mtime moved since the last read; None when the file is gone."""
        try:
            st = os.stat(self.spec.path)
        except OSError:
            return None
        return st.st_size != self.size or st.st_mtime_ns != self.mtime_ns

    def restart(self) -> None:
        """Forget everything read: the next read starts at the top with a fresh parser."""
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        self.cursor = Cursor.start()
        self.parser = self.source.parser(self.spec, None)
        self.malformed = self.oversized = self.unknown = self.odd_times = self.clamped = 0
        self.size = self.mtime_ns = -1
        self.unsaved = True
        self.search.clear()
        self.search_reset = True


@dataclass(slots=True)
class ReadOutcome:
    records: list[Record] = field(default_factory=list)
    owner: Owner | None = None
    lines: int = 0
    bytes_read: int = 0
    search: list[SearchEntry] = field(default_factory=list)
    reset: bool = False  # the file was replaced or truncated: its session must be rebuilt
    gone: bool = False
    more: bool = False  # stopped at the budget
    failed: bool = False  # unreadable this time (logged)


class StreamTable:
    def __init__(
        self,
        sources: Sequence[AgentSource],
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_open: int = 64,
    ) -> None:
        self.sources = list(sources)
        self.max_line_bytes = max_line_bytes
        self.max_open = max_open
        self._streams: dict[str, Stream] = {}
        self._open: OrderedDict[str, Stream] = OrderedDict()
        self._folders = FolderCache()
        self._registries: set[str] = set()  # registry files are always hot
        self.unsaved = UnsavedRows[Stream]()  # the streams to save (see ``take_unsaved``)
        self._order: dict[str, int] = {}  # when each was added: the table's order
        self._added = 0

    def __iter__(self) -> Iterator[Stream]:
        return iter(list(self._streams.values()))

    def __len__(self) -> int:
        return len(self._streams)

    def get(self, path: str) -> Stream | None:
        return self._streams.get(path)

    def add(self, stream: Stream) -> None:
        path = stream.path
        if path not in self._streams:  # (one replaced keeps its place, as in a dict)
            self._added += 1
            self._order[path] = self._added
        self._streams[path] = stream
        self.unsaved.adopt(stream)
        if stream.spec.kind is StreamKind.REGISTRY:
            self._registries.add(stream.path)

    def registries(self) -> list[Stream]:
        return [self._streams[p] for p in self._registries]

    def classify(self, path: Path) -> tuple[AgentSource, StreamSpec] | None:
        for source in self.sources:
            spec = source.classify(path)
            if spec is not None:
                return source, spec
        return None

    def lookup_or_add(self, path: Path) -> Stream | None:
        """The stream for ``path``, classifying a path seen for the first time."""
        stream = self._streams.get(str(path))
        if stream is not None:
            return stream
        found = self.classify(path)
        return None if found is None else self._add_new(*found)

    def _add_new(self, source: AgentSource, spec: StreamSpec) -> Stream | None:
        if spec.compressed and spec.path.with_suffix("").exists():
            return None  # the plain copy is the live one; the archive is its older twin
        stream = Stream(spec=spec, source=source, parser=source.parser(spec, None))
        self.add(stream)
        return stream

    def scan(self, folder: Path | None = None) -> list[Stream]:
        """The streams new since the last scan, in every source or only under ``folder``.
        (A file that went away is noticed when its stream is next read or stat'ed.)"""
        if folder is not None:
            paths = (Path(p) for p in walk_paths(folder) if p not in self._streams)
            return [s for p in paths if (s := self.lookup_or_add(p)) is not None]
        new = []
        for source in self.sources:
            for spec in scan_source(source, self._folders, skip=self._streams):
                stream = self._add_new(source, spec)
                if stream is not None:
                    new.append(stream)
        return new

    def remove(self, stream: Stream) -> None:
        if stream.reader is not None:
            stream.reader.close()
            stream.reader = None
        self._open.pop(stream.path, None)
        self._streams.pop(stream.path, None)
        self._order.pop(stream.path, None)
        self._registries.discard(stream.path)

    def take_unsaved(self) -> list[Stream]:
        """The streams marked unsaved since the last take, in the table's order: those a scan
        of every stream for ``unsaved`` would find, without the scan."""
        return self.unsaved.take(
            lambda s: self._streams.get(s.path) is s, lambda s: self._order[s.path]
        )

    def close(self, stream: Stream) -> None:
        """Close its reader (it reopens at the same cursor when next read)."""
        self._open.pop(stream.path, None)
        self._close(stream)

    def close_all(self) -> None:
        for stream in list(self._open.values()):
            self._close(stream)
        self._open.clear()

    # -- reading -----------------------------------------------------------------------------

    def read(self, stream: Stream, budget: int | None) -> ReadOutcome:
        """New complete lines of a transcript as records (up to ``budget`` bytes)."""
        outcome = ReadOutcome()
        seen_before = (stream.size, stream.mtime_ns)
        try:
            st = os.stat(stream.spec.path)
            stream.size, stream.mtime_ns = st.st_size, st.st_mtime_ns
        except OSError:
            if stream.reader is None:
                outcome.gone = True
                return outcome
            # Deleted, but still open here: the reader drains what was written before that.
        self._read_lines(stream, budget, outcome)
        # Only a stream that moved needs its row written: an agent's write arrives as two file
        # events (modify, close), and the second must not cost a database commit.
        if outcome.bytes_read or outcome.failed or (stream.size, stream.mtime_ns) != seen_before:
            stream.unsaved = True
        return outcome

    def _read_lines(self, stream: Stream, budget: int | None, outcome: ReadOutcome) -> None:
        reader = self._reader(stream)
        while True:
            try:
                result = reader.read(budget=READ_BUDGET_BYTES)
            except (UnreadableFile, OSError) as exc:
                stream.last_error = str(exc)
                outcome.failed = True
                log.warning("cannot read %s: %s", stream.path, exc)
                return
            outcome.bytes_read += result.bytes_read
            if result.reset_at is not None and stream.session is not None:
                outcome.reset = True
                return
            self._parse(stream, result.lines, result.offsets, outcome)
            if result.gone:
                outcome.gone = True
                break
            if not result.more:
                break
            if budget is not None and outcome.bytes_read >= budget:
                outcome.more = True
                break
        outcome.owner = stream.parser.owner

    def read_registry(self, stream: Stream) -> RegistryEntry | bool | None:
        """A registry file's entry; None when it is half-written or not one (the last good
        entry stays in ``stream.registry``); False when the file is gone."""
        try:
            st = os.stat(stream.spec.path)
            data = stream.spec.path.read_bytes()
        except FileNotFoundError:
            return False
        except OSError as exc:
            stream.last_error = str(exc)
            return None
        if (st.st_size, st.st_mtime_ns) != (stream.size, stream.mtime_ns):
            stream.unsaved = True
        ODD_VALUES.take()
        entry = stream.source.parse_registry(data)
        stream.odd_times += ODD_VALUES.take()[0]
        if entry is None:
            stream.malformed += 1
            stream.size = -1  # read it again at the next rescan, even if nothing changes
            return None
        stream.size, stream.mtime_ns = st.st_size, st.st_mtime_ns
        return entry

    def _parse(
        self,
        stream: Stream,
        lines: list[bytes | Oversized],
        offsets: list[int],
        outcome: ReadOutcome,
    ) -> None:
        records = outcome.records
        search = outcome.search
        outcome.lines += len(lines)
        parse = stream.parser.parse  # bound once: this loop runs for every line of every file
        unknown = 0
        ODD_VALUES.take()
        for line, offset in zip(lines, offsets, strict=True):
            if type(line) is Oversized:
                parsed = self._parse_oversized(stream, line)
                records.extend(parsed)
                unknown += sum(1 for r in parsed if type(r) is Unknown)
                continue
            try:
                parsed = parse(line)  # type: ignore[arg-type]  # not Oversized: bytes
            except MalformedLine as exc:
                stream.malformed += 1
                stream.last_error = str(exc)
                if stream.malformed <= MALFORMED_LOG_LIMIT:
                    log.warning("%s: skipped a malformed line (%s)", stream.path, exc)
                continue
            except Exception as exc:  # RecursionError, MemoryError aside: anything it hits
                records.append(self._adapter_failed(stream, exc))
                unknown += 1
                continue
            records.extend(parsed)
            for record in parsed:
                kind = type(record)
                if kind in SEARCHABLE:
                    entry = search_entry(record, offset)
                    if entry is not None:
                        search.append(entry)
                elif kind is Unknown:
                    unknown += 1
                    if stream.unknown + unknown <= UNKNOWN_LOG_LIMIT:
                        log.info(
                            "%s: the line at byte %d is a record of unknown type %r; kept as-is",
                            stream.path,
                            offset,
                            record.kind,  # type: ignore[attr-defined]  # an Unknown: has kind
                        )
        stream.unknown += unknown
        odd_times, clamped = ODD_VALUES.take()
        stream.odd_times += odd_times
        stream.clamped += clamped

    def _parse_oversized(self, stream: Stream, line: Oversized) -> list[Record]:
        stream.oversized += 1
        log.warning(
            "%s: a %d-byte line is over the %d-byte cap; kept its start only",
            stream.path,
            line.length,
            self.max_line_bytes,
        )
        try:
            return stream.parser.parse_oversized(line.prefix, line.length)
        except Exception as exc:
            return [self._adapter_failed(stream, exc)]

    @staticmethod
    def _adapter_failed(stream: Stream, exc: Exception) -> Record:
        """A line the adapter failed on (a bug, or a value it did not expect): kept as an
        ``Unknown`` record, so the lines after it still count. Never raised."""
        stream.last_error = f"internal error: {exc!r}"
        stream.bugs += 1
        if stream.bugs <= BUG_LOG_LIMIT:
            log.error(
                "%s: the adapter failed on a line; kept as unknown", stream.path, exc_info=exc
            )
        return Unknown(kind=f"error/{type(exc).__name__}")

    def _reader(self, stream: Stream) -> LineReader:
        if stream.reader is None:
            if stream.spec.compressed:
                stream.reader = ZstdFileReader(stream.spec.path, stream.cursor)
            elif stream.spec.whole_document:
                stream.reader = WholeDocumentReader(stream.spec.path, stream.cursor)
            else:
                stream.reader = FileTailer(
                    stream.spec.path, stream.cursor, max_line_bytes=self.max_line_bytes
                )
        self._open[stream.path] = stream
        self._open.move_to_end(stream.path)
        while len(self._open) > self.max_open:
            _, coldest = self._open.popitem(last=False)
            self._close(coldest)
        return stream.reader

    @staticmethod
    def _close(stream: Stream) -> None:
        if stream.reader is not None:
            stream.cursor = stream.reader.cursor
            stream.reader.close()
            stream.reader = None
