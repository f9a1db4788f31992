"""The SQLite index: where every stream was read to and what every session is (engine thread).

It is a cache of what the transcripts say, never a source of truth: when it is corrupt, from an
older schema, or written by engine rules that have since changed, it is moved aside and rebuilt
from the transcripts. It exists so a restart is warm (resume at stored byte offsets with the
reducers' states) and so a transition already reported is never reported again.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from . import codec, jsonsafe
from .errors import AgentbarError
from .facts import SessionFacts
from .model import Agent, Process, SessionKey, SessionState, Source, State, WaitingFor
from .privacy import create_private, private_dir
from .search import SEARCH_SCHEMA, SearchBatch, SearchWriter
from .sources.base import StreamKind
from .state.hooks import HookState
from .state.turns import TurnState
from .tail import Cursor

log = logging.getLogger(__name__)

SCHEMA_VERSION = 4  # 2: sessions.hooks. 3: search_files, search_docs, search_text (FTS5).
# 4: streams.odd_times, streams.clamped
# Bump when the state machines or adapters change what they derive from the same lines, so
# that states cached by older rules are recomputed rather than trusted.
RULES_VERSION = 6
# 2: hook events outrank the other signals; TurnState.moved_at. 3: Codex
# turns without task markers (0.5x-0.9x) end on their last response. 4: Codex usage per response
# (totals that go back no longer zero it); facts carry the priced ledger. 5: a Claude slash
# command names a session until a prompt does. 6: a Claude slash command is a search row (the
# person's prompt), so sessions read before are read again to find theirs

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS streams (
    path TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL,
    session_id TEXT,
    agent_id TEXT,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    fingerprint BLOB NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    parser BLOB NOT NULL,
    malformed INTEGER NOT NULL DEFAULT 0,
    oversized INTEGER NOT NULL DEFAULT 0,
    unknown INTEGER NOT NULL DEFAULT 0,
    odd_times INTEGER NOT NULL DEFAULT 0,
    clamped INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE TABLE IF NOT EXISTS sessions (
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project TEXT,
    title TEXT,
    model TEXT,
    started_at REAL,
    last_activity REAL,
    transcript TEXT,
    state TEXT,
    waiting_for TEXT,
    detail TEXT,
    source TEXT,
    state_since REAL,
    pid INTEGER,
    proc_create REAL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
    turn BLOB NOT NULL,
    facts BLOB NOT NULL,
    hooks BLOB,
    PRIMARY KEY (agent, session_id)
);
CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions (last_activity);
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamRow:
    path: str
    agent: Agent
    kind: StreamKind
    session_id: str | None
    agent_id: str | None
    cursor: Cursor
    size: int
    mtime_ns: int
    parser: dict[str, Any]
    malformed: int = 0
    oversized: int = 0
    unknown: int = 0
    odd_times: int = 0
    clamped: int = 0
    last_error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRow:
    key: SessionKey
    transcript: str | None
    turn: TurnState
    facts: SessionFacts
    state: SessionState | None
    state_since: float | None
    process: Process | None
    hooks: HookState = field(default_factory=HookState)


class IndexUnusable(AgentbarError):
    """The index file cannot be opened or read; the caller rebuilds."""

    title = "The session index was damaged and is rebuilt"

    def __init__(self, message: str, *, outdated: bool = False) -> None:
        super().__init__(message)
        self.outdated = outdated  # only written by another version: no damage to report


class Index:
    def __init__(self, conn: sqlite3.Connection, path: Path | None) -> None:
        self._conn = conn
        self.path = path
        self.search = SearchWriter()
        # Why the file found at open was damaged and set aside (None: it was fine, new, or only
        # outdated): the engine tells the person, since rebuilding takes a while.
        self.damaged: str | None = None

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path) -> Index:
        """Open (or create) the index at ``path``; a corrupt or outdated one is moved aside."""
        private_dir(path.parent)  # the data folder: 0700 whoever opens the index first
        try:
            return cls._open_checked(path)
        except (sqlite3.DatabaseError, IndexUnusable) as exc:
            log.warning("index %s is unusable (%s); rebuilding from the transcripts", path, exc)
            _move_aside(path)
            index = cls._open_checked(path)
            if not (isinstance(exc, IndexUnusable) and exc.outdated):
                index.damaged = str(exc)
            return index

    @classmethod
    def in_memory(cls) -> Index:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        index = cls(conn, None)
        index._init_schema()
        return index

    @classmethod
    def snapshot_of(cls, path: Path) -> Index:
        """A private in-memory copy of the index at ``path``, for a process that must not write
        it (another agentbar owns it). Empty when the file is missing or unreadable."""
        index = cls.in_memory()
        if not path.exists():
            return index
        try:
            source = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
            try:
                source.backup(index._conn)
            finally:
                source.close()
            if not index._is_current():
                index = cls.in_memory()
            else:
                index.search.load(index._conn)
        except sqlite3.DatabaseError as exc:
            log.warning("cannot copy index %s (%s); starting empty", path, exc)
            index = cls.in_memory()
        return index

    @classmethod
    def _open_checked(cls, path: Path) -> Index:
        create_private(path)  # SQLite gives its -wal, -shm and -journal the same mode
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            index = cls(conn, path)
            has_meta = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
            ).fetchone()
            if has_meta and not index._is_current():
                raise IndexUnusable("written by another schema or rule version", outdated=True)
            if has_meta:
                check = conn.execute("PRAGMA quick_check").fetchone()
                if not check or check[0] != "ok":
                    raise IndexUnusable(f"quick_check: {check}")
            index._init_schema()
            return index
        except BaseException:
            conn.close()
            raise

    def _init_schema(self) -> None:
        self._conn.executescript(_SCHEMA + SEARCH_SCHEMA)
        self.search.load(self._conn)
        with self._transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("schema", str(SCHEMA_VERSION)), ("rules", str(RULES_VERSION))],
            )

    def _is_current(self) -> bool:
        try:
            rows = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            return False
        return rows.get("schema") == str(SCHEMA_VERSION) and rows.get("rules") == str(RULES_VERSION)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()

    # -- reading -----------------------------------------------------------------------------

    def load(self) -> tuple[dict[str, StreamRow], dict[SessionKey, SessionRow]]:
        """Everything stored. Raises ``IndexUnusable`` when a row cannot be decoded."""
        try:
            streams = {row.path: row for row in self._load_streams()}
            sessions = {row.key: row for row in self._load_sessions()}
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError) as exc:
            raise IndexUnusable(str(exc)) from exc
        return streams, sessions

    def _load_streams(self) -> Iterable[StreamRow]:
        for row in self._conn.execute(
            "SELECT path, agent, kind, session_id, agent_id, dev, ino, offset, fingerprint,"
            " size, mtime_ns, parser, malformed, oversized, unknown, odd_times, clamped,"
            " last_error FROM streams"
        ):
            yield StreamRow(
                path=row[0],
                agent=Agent(row[1]),
                kind=StreamKind(row[2]),
                session_id=row[3],
                agent_id=row[4],
                cursor=Cursor(row[5], row[6], row[7], bytes(row[8])),
                size=row[9],
                mtime_ns=row[10],
                parser=orjson.loads(row[11]),
                malformed=row[12],
                oversized=row[13],
                unknown=row[14],
                odd_times=row[15],
                clamped=row[16],
                last_error=row[17],
            )

    def _load_sessions(self) -> Iterable[SessionRow]:
        for row in self._conn.execute(
            "SELECT agent, session_id, transcript, state, waiting_for, detail, source,"
            " state_since, pid, proc_create, turn, facts, hooks FROM sessions"
        ):
            state = None
            if row[3] is not None:
                state = SessionState(
                    state=State(row[3]),
                    waiting_for=None if row[4] is None else WaitingFor(row[4]),
                    detail=row[5] or "",
                    source=Source(row[6]),
                )
            process = None if row[8] is None else Process(pid=row[8], create_time=row[9])
            yield SessionRow(
                key=SessionKey(Agent(row[0]), row[1]),
                transcript=row[2],
                turn=codec.loads(TurnState, row[10]),
                facts=codec.loads(SessionFacts, row[11]),
                state=state,
                state_since=row[7],
                process=process,
                hooks=HookState() if row[12] is None else codec.loads(HookState, row[12]),
            )

    # -- writing -----------------------------------------------------------------------------

    def save(
        self,
        streams: Iterable[StreamRow] = (),
        sessions: Iterable[SessionRow] = (),
        *,
        deleted_streams: Iterable[str] = (),
        deleted_sessions: Iterable[SessionKey] = (),
        search: SearchBatch | None = None,
    ) -> None:
        """Write one batch atomically. Raises ``sqlite3.Error`` (the caller keeps its state
        dirty and retries, or rebuilds with ``replace_all``). ``search`` rows go in the same
        transaction as the streams' offsets they were read up to."""
        with self._transaction():
            if search is not None:
                self.search.write(self._conn, search)
            self._conn.executemany(
                "INSERT OR REPLACE INTO streams VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [_stream_values(s) for s in streams],
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO sessions VALUES"
                " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [_session_values(s) for s in sessions],
            )
            self._conn.executemany(
                "DELETE FROM streams WHERE path = ?", [(p,) for p in deleted_streams]
            )
            self._conn.executemany(
                "DELETE FROM sessions WHERE agent = ? AND session_id = ?",
                [(str(k.agent), k.session_id) for k in deleted_sessions],
            )

    def replace_all(self, streams: Iterable[StreamRow], sessions: Iterable[SessionRow]) -> None:
        """Start over with exactly these rows (after the file was found corrupt mid-run)."""
        if self.path is not None:
            self.close()
            _move_aside(self.path)
            fresh = Index._open_checked(self.path)
            self._conn = fresh._conn
            self.search = fresh.search
        with self._transaction():
            self._conn.execute("DELETE FROM streams")
            self._conn.execute("DELETE FROM sessions")
            self.search.clear(self._conn)
        self.save(streams, sessions)

    def search_backlog(self) -> bool:
        """Whether saved search rows still wait for the full-text index."""
        return self.search.backlog

    def index_search(self, max_rows: int) -> bool:
        """Put up to ``max_rows`` saved search rows into the full-text index (the backlog a cold
        start leaves); True while some are left."""
        with self._transaction():
            return self.search.index_backlog(self._conn, max_rows)

    @contextlib.contextmanager
    def _transaction(self) -> Any:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")


def _stream_values(s: StreamRow) -> tuple[Any, ...]:
    c = s.cursor
    return (
        s.path,
        str(s.agent),
        str(s.kind),
        s.session_id,
        s.agent_id,
        c.dev,
        c.ino,
        c.offset,
        c.fingerprint,
        s.size,
        s.mtime_ns,
        jsonsafe.dumps(s.parser),
        s.malformed,
        s.oversized,
        s.unknown,
        s.odd_times,
        s.clamped,
        s.last_error,
    )


def _session_values(s: SessionRow) -> tuple[Any, ...]:
    facts = s.facts
    usage = facts.usage
    state = s.state
    return (
        str(s.key.agent),
        s.key.session_id,
        facts.project,
        facts.title,
        facts.model,
        facts.started_at,
        facts.last_activity,
        s.transcript,
        None if state is None else str(state.state),
        None if state is None or state.waiting_for is None else str(state.waiting_for),
        None if state is None else state.detail,
        None if state is None else str(state.source),
        s.state_since,
        None if s.process is None else s.process.pid,
        None if s.process is None else s.process.create_time,
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_creation_tokens,
        codec.dumps(s.turn),
        codec.dumps(s.facts),
        None if s.hooks == HookState() else codec.dumps(s.hooks),
    )


def _move_aside(path: Path) -> None:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for suffix in ("", "-wal", "-shm"):
        old = path.with_name(path.name + suffix)
        if old.exists():
            with contextlib.suppress(OSError):
                old.replace(old.with_name(f"{path.name}.unusable-{stamp}{suffix}"))
    # Keep only the newest unusable copies: the index is a cache, nobody needs its history.
    for stale in sorted(path.parent.glob(f"{path.name}.unusable-*"))[:-3]:
        with contextlib.suppress(OSError):
            stale.unlink()
