"""Full-text search over every transcript, from the engine's index (any thread but the engine's).

The engine writes one row per prompt, answer and tool call (its command or summary) into the
index's ``search_docs`` / ``search_text`` (FTS5) tables, in the same transaction as the stream's
progress (see ``core/index.py``). This module reads them through a read-only connection of its
own, so a search never waits for the engine nor holds it up.

A query is the user's words, never FTS5 syntax: each word is quoted (quotes doubled inside), the
words must all match, and the last one also matches as a prefix (search as you type). Hits come
best first (bm25), each with a snippet as plain-text segments, the matches marked, for the
front-end to show without parsing any markup. The same text of one session (a prompt typed
again, a command run ten times) is one hit with a ``count``, so a page of results is never the
same line over and over. Filters: the agent, one session, a set of sessions (the server's
project filter) and the time of the line (``since``).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from . import jsonsafe
from .model import Agent, SessionKey, SessionSnapshot, iso
from .records import TITLE_RANK_COMMAND, AssistantText, Prompt, Record, TitleSet, ToolCall

if TYPE_CHECKING:
    from .replay.files import AgentRoots

MAX_QUERY_CHARS = 500
MAX_WORDS = 16
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# Rows read per hit asked for: room for the repeats folded into one hit and for the hits the
# folder rule or a session filter drops.
OVERFETCH = 4
SNIPPET_TOKENS = 16
RANK_WINDOW = 2000  # the newest matches ranked for a query without filters
MARK_START, MARK_END = "\x02", "\x03"  # never stored: ``clean_text`` removes them
MAIN_THREAD = "main"
_SPACES = re.compile(r"\s+")
# Characters of one record's text that are indexed: a prompt or answer is found by its first
# words in practice, and a pasted log of megabytes would cost the cold index dearly.
TEXT_CHARS = 2000


SEARCH_SCHEMA = """
CREATE TABLE IF NOT EXISTS search_files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    thread TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS search_files_by_session ON search_files (agent, session_id);
CREATE TABLE IF NOT EXISTS search_docs (
    id INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    kind TEXT NOT NULL,
    ts REAL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS search_docs_by_file ON search_docs (file);
CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
    text, content = 'search_docs', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS search_staging (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    rows BLOB NOT NULL,
    provisional INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS search_staging_by_path ON search_staging (path);
"""
STAGING_ROWS = 2_000  # rows per staged blob: the unit of indexing after a cold start


@dataclass(frozen=True, slots=True)
class FileOwner:
    """Whose a transcript file's rows are: the session and the thread (``main`` or the
    sub-agent's id)."""

    key: SessionKey
    thread: str


@dataclass(slots=True)
class SearchBatch:
    """What one engine save changes in the search tables."""

    rows: dict[str, list[SearchEntry]] = field(default_factory=dict)  # new rows by file
    owners: dict[str, FileOwner] = field(default_factory=dict)  # of files with rows, or moved
    reset: list[str] = field(default_factory=list)  # files read again from the top
    gone: list[str] = field(default_factory=list)  # files no longer there
    gone_sessions: list[SessionKey] = field(default_factory=list)
    index_now: bool = True  # False (a cold catch-up): stage the rows, index them later
    # Rows staged ahead of their streams' saved offsets, to bound what a cold catch-up holds
    # in memory: kept only once a later save commits those offsets, dropped on load otherwise.
    provisional: bool = False


class SearchWriter:
    """Writes the search tables inside the index's transactions (engine thread).

    ``search_docs`` holds the text once and ``search_text`` is its FTS5 index (external
    content); both are written together. A cold catch-up does not pay for them: its rows are
    saved as one blob per file and slice (``search_staging``), in the same transaction as the
    streams' offsets, and moved into the full-text index afterwards, a slice per engine step
    (``index_backlog``). Live rows, once nothing is staged, go straight in.

    A cold catch-up of a large history also stages rows now and then before its one save of
    the offsets (``SearchBatch.provisional``), so it never holds them all in memory: such rows
    become final with the next save (every stream that has them is saved then), and a start
    drops any left provisional by a crash (their lines are read again).
    """

    def __init__(self) -> None:
        self._files: dict[str, int] = {}
        self._staged = False

    def load(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM search_staging WHERE provisional = 1")
        self._files = dict(conn.execute("SELECT path, id FROM search_files"))
        self._staged = conn.execute("SELECT EXISTS (SELECT 1 FROM search_staging)").fetchone()[0]

    def clear(self, conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM search_staging")
        conn.execute("DELETE FROM search_docs")
        conn.execute("DELETE FROM search_files")
        conn.execute("INSERT INTO search_text (search_text) VALUES ('delete-all')")
        self._files = {}
        self._staged = False

    @property
    def backlog(self) -> bool:
        """Rows staged by a cold catch-up wait for the full-text index."""
        return bool(self._staged)

    def write(self, conn: sqlite3.Connection, batch: SearchBatch) -> None:
        if not batch.provisional:
            conn.execute("UPDATE search_staging SET provisional = 0 WHERE provisional = 1")
        dropped = [*batch.reset, *batch.gone]
        for key in batch.gone_sessions:
            dropped += [
                path
                for (path,) in conn.execute(
                    "SELECT path FROM search_files WHERE agent = ? AND session_id = ?",
                    (str(key.agent), key.session_id),
                )
            ]
        if dropped:
            self._drop(conn, dropped, forget=set(dropped) - set(batch.reset))
        self._files_of(conn, batch.owners)
        if not batch.rows:
            return
        if batch.index_now and not self._staged and not batch.provisional:
            self._insert(conn, batch.rows)
            return
        staged = []
        for path, rows in batch.rows.items():
            for start in range(0, len(rows), STAGING_ROWS):
                blob = orjson.dumps(rows[start : start + STAGING_ROWS])
                staged.append((path, blob, int(batch.provisional)))
        conn.executemany(
            "INSERT INTO search_staging (path, rows, provisional) VALUES (?, ?, ?)", staged
        )
        self._staged = True

    def index_backlog(self, conn: sqlite3.Connection, max_rows: int) -> bool:
        """Index staged rows, about ``max_rows`` of them; True while some are left."""
        taken: list[int] = []
        rows: dict[str, list[SearchEntry]] = {}
        count = 0
        for staging_id, path, blob in conn.execute(
            "SELECT id, path, rows FROM search_staging WHERE provisional = 0 ORDER BY id"
        ):
            if count >= max_rows:
                break
            taken.append(staging_id)
            entries = [tuple(entry) for entry in orjson.loads(blob)]
            rows.setdefault(path, []).extend(entries)
            count += len(entries)
        self._insert(conn, rows)
        conn.executemany("DELETE FROM search_staging WHERE id = ?", [(i,) for i in taken])
        self._staged = conn.execute("SELECT EXISTS (SELECT 1 FROM search_staging)").fetchone()[0]
        return bool(self._staged)

    def _insert(self, conn: sqlite3.Connection, rows: dict[str, list[SearchEntry]]) -> None:
        first = (conn.execute("SELECT max(id) FROM search_docs").fetchone()[0] or 0) + 1
        docs: list[tuple[int, int, int, str, float | None, str]] = []
        for path, entries in rows.items():
            file = self._files.get(path)
            if file is None:
                continue  # its session is gone
            start = first + len(docs)
            docs.extend((start + n, file, *entry) for n, entry in enumerate(entries))
        if not docs:
            return
        conn.executemany("INSERT INTO search_docs VALUES (?,?,?,?,?,?)", docs)
        conn.execute(
            "INSERT INTO search_text (rowid, text) SELECT id, text FROM search_docs WHERE id >= ?",
            (first,),
        )

    def _files_of(self, conn: sqlite3.Connection, owners: dict[str, FileOwner]) -> None:
        """File the rows of each path under its owner: known files updated, new ones added
        (with the ids SQLite would give them one by one: the next after the largest), each kind
        in one statement (a cold catch-up files hundreds at a time)."""
        updates, added = [], []
        for path, owner in owners.items():
            values = (str(owner.key.agent), owner.key.session_id, owner.thread)
            file = self._files.get(path)
            if file is None:
                added.append((path, *values))
            else:
                updates.append((*values, file))
        conn.executemany(
            "UPDATE search_files SET agent = ?, session_id = ?, thread = ? WHERE id = ?", updates
        )
        if not added:
            return
        first = (conn.execute("SELECT max(id) FROM search_files").fetchone()[0] or 0) + 1
        conn.executemany(
            "INSERT INTO search_files (id, path, agent, session_id, thread) VALUES (?,?,?,?,?)",
            [(first + n, *row) for n, row in enumerate(added)],
        )
        self._files.update((row[0], first + n) for n, row in enumerate(added))

    def _drop(self, conn: sqlite3.Connection, paths: list[str], *, forget: set[str]) -> None:
        """Remove the rows of ``paths`` (staged or indexed); ``forget`` their files too."""
        conn.executemany("DELETE FROM search_staging WHERE path = ?", [(p,) for p in paths])
        files = [(self._files[p],) for p in paths if p in self._files]
        # External content: the full-text index forgets a row only when given its text.
        conn.executemany(
            "INSERT INTO search_text (search_text, rowid, text)"
            " SELECT 'delete', id, text FROM search_docs WHERE file = ?",
            files,
        )
        conn.executemany("DELETE FROM search_docs WHERE file = ?", files)
        for path in forget:
            file = self._files.pop(path, None)
            if file is not None:
                conn.execute("DELETE FROM search_files WHERE id = ?", (file,))


class Kind:
    PROMPT = "prompt"
    ANSWER = "answer"
    TOOL = "tool"


def clean_text(text: str) -> str:
    """Text as stored for search: the snippet markers removed."""
    if MARK_START in text or MARK_END in text:
        return text.replace(MARK_START, " ").replace(MARK_END, " ")
    return text


# (A title only when it is a slash command the person typed: ``/review src/app.py`` is a prompt
# of theirs, which the replay shows as one, but not a ``Prompt`` record: it starts no turn.)
SEARCHABLE = frozenset({Prompt, AssistantText, ToolCall, TitleSet})
# One search row as the engine holds it until saved: (offset of the line, kind, ts, text). Plain
# tuples of atoms, which the garbage collector stops tracking: a cold catch-up holds many.
SearchEntry = tuple[int, str, float | None, str]


def search_entry(record: Record, offset: int) -> SearchEntry | None:
    """What the index stores for a record of the line at ``offset`` (None: not searchable)."""
    if type(record) is ToolCall:
        text = f"{record.name} {record.summary}"
        kind = Kind.TOOL
    elif type(record) is AssistantText:
        text, kind = record.text, Kind.ANSWER
    elif type(record) is Prompt:
        text, kind = record.text, Kind.PROMPT
    elif type(record) is TitleSet and record.rank == TITLE_RANK_COMMAND:
        text, kind = record.title, Kind.PROMPT
    else:
        return None
    if not text:
        return None
    return offset, kind, record.ts, clean_text(text[:TEXT_CHARS])


def fts_query(text: str) -> str | None:
    """The FTS5 query for what a person typed: every word quoted, the last one a prefix too.
    None when there is nothing to search for."""
    # SQLite ends a query string at a NUL and refuses lone surrogates: neither is a word.
    text = jsonsafe.fix_text(text[:MAX_QUERY_CHARS].replace("\x00", " "))
    words = [w for w in text.split() if any(c.isalnum() for c in w)]
    if not words:
        return None
    words = words[:MAX_WORDS]
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    key: SessionKey
    thread: str
    offset: int
    kind: str
    ts: float | None
    snippet: tuple[tuple[str, bool], ...]  # (text, is a match)
    score: float
    count: int = 1  # lines of this session with this same snippet (this one the best ranked)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": str(self.key.agent),
            "session_id": self.key.session_id,
            "thread": self.thread,
            "offset": self.offset,
            "kind": self.kind,
            "ts": iso(self.ts),
            "snippet": [{"text": text, "mark": mark} for text, mark in self.snippet],
            "score": round(self.score, 4),
            "count": self.count,
        }


def fold_repeats(rows: list[Any], limit: int) -> list[tuple[Any, int]]:
    """Rows in order, each session's repeated text once with how many lines it stands for
    (``row[1]``, ``row[2]``: agent and session id; ``row[-1]``: the text), at most ``limit``."""
    first: dict[tuple[str, str, str], int] = {}
    kept: list[list[Any]] = []
    for row in rows:
        same = (row[1], row[2], row[-1])
        at = first.get(same)
        if at is not None:
            kept[at][1] += 1
        elif len(kept) < limit:
            first[same] = len(kept)
            kept.append([row, 1])
    return [(row, count) for row, count in kept]


def hits_json(hits: list[Hit], sessions: list[SessionSnapshot]) -> list[dict[str, Any]]:
    """Hits as the API sends them: each with its session's title, project and host."""
    known = {s.key: s for s in sessions}
    results = []
    for hit in hits:
        doc = hit.to_json()
        snap = known.get(hit.key)
        doc["title"] = None if snap is None else snap.title
        doc["project"] = None if snap is None else snap.project
        doc["host"] = hit.key.host
        results.append(doc)
    return results


def snippet_segments(snippet: str) -> tuple[tuple[str, bool], ...]:
    segments: list[tuple[str, bool]] = []
    rest = snippet
    while rest:
        start = rest.find(MARK_START)
        if start < 0:
            segments.append((rest, False))
            break
        if start:
            segments.append((rest[:start], False))
        end = rest.find(MARK_END, start + 1)
        if end < 0:
            segments.append((rest[start + 1 :], True))
            break
        segments.append((rest[start + 1 : end], True))
        rest = rest[end + 1 :]
    return tuple((_SPACES.sub(" ", t), m) for t, m in segments if t)


class Searcher:
    """Searches the index file through a read-only connection (one query at a time). With
    ``roots``, a hit counts only if its file may be read under the replay's folder rule (its
    real path inside an agent root): a transcript linked in from elsewhere is not searched."""

    def __init__(self, index_path: Path, *, roots: AgentRoots | None = None) -> None:
        self.path = index_path
        self.roots = roots
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._counts: tuple[int, dict[SessionKey, dict[str, int]]] | None = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=5)
        return self._conn

    def search(
        self,
        text: str,
        *,
        limit: int = DEFAULT_LIMIT,
        agent: Agent | None = None,
        session_id: str | None = None,
        since: float | None = None,
        sessions: frozenset[SessionKey] | None = None,
    ) -> list[Hit]:
        """Hits for ``text``, best first; ``since`` keeps lines written at or after that
        moment (epoch seconds), ``sessions`` keeps those sessions' lines only."""
        query = fts_query(text)
        if query is None or (sessions is not None and not sessions):
            return []
        rows = self._rows(
            query, limit, agent=agent, session_id=session_id, since=since, sessions=sessions
        )
        if self.roots is not None:
            roots, readable = self.roots, dict[str, bool]()
            for path in {row[8] for row in rows}:
                readable[path] = roots.contains(path)
            rows = [row for row in rows if readable[row[8]]]
        kept = fold_repeats(rows, max(1, min(limit, MAX_LIMIT)))
        return [
            Hit(
                key=SessionKey(Agent(row[1]), row[2]),
                thread=row[3] or MAIN_THREAD,
                offset=row[4],
                kind=row[5],
                ts=row[6],
                snippet=snippet_segments(row[9] or ""),
                score=-float(row[7]),
                count=count,
            )
            for row, count in kept
        ]

    def _rows(
        self,
        query: str,
        limit: int,
        *,
        agent: Agent | None,
        session_id: str | None,
        since: float | None,
        sessions: frozenset[SessionKey] | None,
    ) -> list[Any]:
        limit = max(1, min(limit, MAX_LIMIT))
        sql = (
            # Snippets in the same query: made apart, by rowid, FTS5 runs the match again for
            # each (four times slower in all, bench/bench_search.py).
            "SELECT d.id, f.agent, f.session_id, f.thread, d.offset, d.kind, d.ts, rank, f.path,"
            f" snippet(search_text, 0, '{MARK_START}', '{MARK_END}', '…', {SNIPPET_TOKENS}),"
            " d.text"
            " FROM search_text JOIN search_docs d ON d.id = search_text.rowid"
            " JOIN search_files f ON f.id = d.file"
            " WHERE search_text MATCH ? AND search_text.rowid >= ?"
        )
        args: list[Any] = [query]
        if agent is not None:
            sql += " AND f.agent = ?"
        if session_id is not None:
            sql += " AND f.session_id = ?"
        if since is not None:
            sql += " AND d.ts >= ?"
        if sessions is not None:
            # One parameter whatever the number of sessions (SQLite bounds the parameters).
            sql += " AND f.agent || ':' || f.session_id IN (SELECT value FROM json_each(?))"
        sql += " ORDER BY rank, search_text.rowid DESC LIMIT ?"
        with self._lock:
            try:
                conn = self._connection()
                # Rank (bm25) the newest RANK_WINDOW matches only: a common word matches tens of
                # thousands of lines, and scoring them all costs more than a person waits.
                low = 0
                if agent is None and session_id is None and sessions is None:
                    bound = conn.execute(
                        "SELECT rowid FROM search_text WHERE search_text MATCH ?"
                        " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                        (query, RANK_WINDOW - 1),
                    ).fetchone()
                    low = bound[0] if bound else 0
                args.append(low)
                if agent is not None:
                    args.append(str(agent))
                if session_id is not None:
                    args.append(session_id)
                if since is not None:
                    args.append(since)
                if sessions is not None:
                    keys = [f"{k.agent}:{k.session_id}" for k in sessions]
                    args.append(orjson.dumps(keys).decode())
                args.append(limit * OVERFETCH)
                return conn.execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc) or "unable to open" in str(exc):
                    self._reset()
                    return []
                raise

    def counts(self) -> dict[SessionKey, dict[str, int]]:
        """Prompts, answers and tool calls per session (cached until the index changes)."""
        with self._lock:
            try:
                conn = self._connection()
                version = conn.execute("PRAGMA data_version").fetchone()[0]
                if self._counts is not None and self._counts[0] == version:
                    return self._counts[1]
                found: dict[SessionKey, dict[str, int]] = {}
                for agent, session_id, kind, count in conn.execute(
                    "SELECT f.agent, f.session_id, d.kind, count(*)"
                    " FROM search_docs d JOIN search_files f ON f.id = d.file"
                    " GROUP BY f.agent, f.session_id, d.kind"
                ):
                    key = SessionKey(Agent(agent), session_id)
                    found.setdefault(key, {})[kind] = count
            except sqlite3.OperationalError:
                self._reset()
                return {}
            self._counts = (version, found)
            return found

    def _reset(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None
        self._counts = None
