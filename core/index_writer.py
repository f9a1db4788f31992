"""The engine's side of the index: loading its sessions and streams at start, saving what
changed after each batch, and staging search rows ahead of a cold catch-up's save (engine
thread only).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .errors import Fault, FaultKind
from .index import Index, IndexUnusable, SessionRow, StreamRow
from .model import Agent, SessionKey
from .search import MAIN_THREAD, FileOwner, SearchBatch, SearchEntry
from .session_record import SessionRecord, SessionTable
from .sources.base import StreamKind
from .streams import Stream, StreamTable
from .tail import Cursor

log = logging.getLogger(__name__)

REWRITE_FAILED = Fault(
    FaultKind.INDEX,
    "Cannot save the session index",
    "agentbar cannot write its index (the disk may be full or the file damaged); sessions are "
    "still shown, and it keeps trying. Free some space, or quit agentbar and delete the index "
    "file to have it rebuilt.",
)


class StandIns(Protocol):
    """The stand-in streams of sessions kept in a database, and their readers' cursors
    (``sources/snapshot.py``)."""

    def streams(self) -> list[Stream]: ...

    def cursors(self) -> list[tuple[Agent, str, dict[str, Any]]]: ...

    def resume(self, store: str, cursor: dict[str, Any]) -> bool: ...


class _NoStandIns:
    def streams(self) -> list[Stream]:
        return []

    def cursors(self) -> list[tuple[Agent, str, dict[str, Any]]]:
        return []

    def resume(self, store: str, cursor: dict[str, Any]) -> bool:
        return False


class IndexWriter:
    def __init__(
        self,
        index: Index,
        streams: StreamTable,
        sessions: SessionTable,
        *,
        report: Callable[[Fault], None],
        standins: StandIns | None = None,
    ) -> None:
        """``report`` hears of the faults a person should know about (an index rebuilt).
        ``standins``' streams have their search rows saved, never a stream row: no source
        claims them back at a start. Their readers' cursors are saved as stream rows of their
        stores' paths instead, and given back to them at the next start."""
        self.index = index
        self._streams = streams
        self._sessions = sessions
        self._report = report
        self._standins = standins or _NoStandIns()
        self._cursors_saved: dict[str, dict[str, Any]] = {}
        self.deleted_streams: set[str] = set()
        self.search_chars = 0  # search text read and not yet saved

    def load(self) -> None:
        """The sessions and streams the index holds (a rebuilt index, if it cannot be read)."""
        if self.index.damaged is not None:
            self._report(damaged(self.index.damaged, self.index.path))
            self.index.damaged = None
        try:
            stream_rows, session_rows = self.index.load()
        except IndexUnusable as exc:
            log.warning("index unreadable (%s); rebuilding it from the transcripts", exc)
            self._report(damaged(exc.message, self.index.path))
            self.index.replace_all([], [])
            stream_rows, session_rows = {}, {}
        for row in session_rows.values():
            self._sessions.add(
                SessionRecord(
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
            )
        for stream_row in stream_rows.values():
            self._load_stream(stream_row)

    def _load_stream(self, stream_row: StreamRow) -> None:
        if self._standins.resume(stream_row.path, stream_row.parser):
            self._cursors_saved[stream_row.path] = stream_row.parser
            return
        found = self._streams.classify(Path(stream_row.path))
        if found is None:
            self.deleted_streams.add(stream_row.path)  # no adapter claims it any more
            return
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
        self._streams.add(stream)
        record = self._sessions.get(session)
        if record is not None:
            record.streams.add(stream_row.path)

    def note_search(self, stream: Stream, search: list[SearchEntry]) -> None:
        """Search rows read from ``stream``, saved with its offset."""
        stream.search.extend(search)
        self.search_chars += sum(len(entry[3]) for entry in search)

    def _search_batch(self, streams: list[Stream], *, index_now: bool) -> SearchBatch:
        """The search rows to save with these streams: written with the streams' offsets, and
        put in the full-text index at once when live (after a cold catch-up, in slices)."""
        batch = SearchBatch(index_now=index_now)
        for stream in streams:
            if stream.search_reset:
                batch.reset.append(stream.path)
            if stream.session is None or not (stream.search or stream.search_moved):
                continue
            batch.owners[stream.path] = FileOwner(stream.session, stream.agent_id or MAIN_THREAD)
            if stream.search:
                batch.rows[stream.path] = list(stream.search)
        batch.gone = list(self.deleted_streams)
        batch.gone_sessions = list(self._sessions.deleted)
        return batch

    def stage_search(self) -> None:
        """Save the search rows read so far ahead of the streams' offsets (provisional rows:
        see ``SearchWriter``), and free them. A stream about to lose its old rows keeps its
        new ones for the save that drops the old."""
        batch = SearchBatch(index_now=False, provisional=True)
        staged = []
        for stream in [*self._streams, *self._standins.streams()]:
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
        self.search_chars = 0

    def persist(self, *, index_now: bool) -> None:
        """Save every changed stream and session in one transaction (``index_now``: put their
        search rows in the full-text index at once)."""
        # Only the rows marked since the last save (``core/unsaved.py``), in the tables' order:
        # what a scan of all of them for ``unsaved`` finds, without the scan.
        streams = self._streams.take_unsaved()
        sessions = self._sessions.take_unsaved()
        standins = [s for s in self._standins.streams() if s.search or s.search_reset]
        cursors = [
            row for row in self._cursor_rows() if self._cursors_saved.get(row.path) != row.parser
        ]
        if not (streams or sessions or standins or cursors) and not (
            self.deleted_streams or self._sessions.deleted
        ):
            return
        if not self._save(streams, sessions, standins, cursors, index_now=index_now):
            self._streams.unsaved.put_back(streams)  # tried again at the next save
            self._sessions.unsaved.put_back(sessions)
            return
        self.search_chars = 0
        self._cursors_saved.update((row.path, row.parser) for row in cursors)
        for stream in standins:
            stream.search.clear()
            stream.search_reset = False
        for stream in streams:
            stream.unsaved = False
            stream.search.clear()
            stream.search_reset = stream.search_moved = False
        for session in sessions:
            session.unsaved = False
        self.deleted_streams.clear()
        self._sessions.deleted.clear()

    def _cursor_rows(self) -> list[StreamRow]:
        return [
            cursor_row(agent, store, cursor) for agent, store, cursor in self._standins.cursors()
        ]

    def _save(
        self,
        streams: list[Stream],
        sessions: list[SessionRecord],
        standins: list[Stream],
        cursors: list[StreamRow],
        *,
        index_now: bool,
    ) -> bool:
        """Save ``streams``, ``sessions``, the search rows of both kinds of stream and the
        snapshot readers' ``cursors`` in one transaction."""
        try:
            self.index.save(
                [*(stream_row(s) for s in streams), *cursors],
                [session_row(s) for s in sessions],
                deleted_streams=self.deleted_streams,
                deleted_sessions=self._sessions.deleted,
                search=self._search_batch([*streams, *standins], index_now=index_now),
            )
        except sqlite3.DatabaseError as exc:
            log.error("index write failed (%s); rewriting it from memory", exc)
            try:
                self.index.replace_all(
                    [*(stream_row(s) for s in self._streams), *self._cursor_rows()],
                    [session_row(s) for s in self._sessions],
                )
            except sqlite3.Error as again:
                log.error("index rewrite failed too (%s); will retry", again)
                self._report(REWRITE_FAILED)
                return False
        except sqlite3.Error as exc:
            log.error("index write failed (%s); will retry", exc)
            return False
        return True


def damaged(why: str, path: Path | None) -> Fault:
    return Fault(
        FaultKind.INDEX,
        "The session index was damaged and is rebuilt",
        f"agentbar found its index damaged ({why}) and rebuilds it from the agents' own "
        "files, which are untouched: sessions reappear as they are read again, and one that "
        "finished meanwhile may not notify.",
        str(path or ""),
    )


def stream_row(stream: Stream) -> StreamRow:
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


def cursor_row(agent: Agent, store: str, cursor: dict[str, Any]) -> StreamRow:
    """A snapshot reader's cursor as the stream row of its store (given back at a start)."""
    return StreamRow(
        path=store,
        agent=agent,
        kind=StreamKind.TRANSCRIPT,
        session_id=None,
        agent_id=None,
        cursor=Cursor.start(),
        size=-1,
        mtime_ns=0,
        parser=cursor,
    )


def session_row(session: SessionRecord) -> SessionRow:
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
