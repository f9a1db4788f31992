"""Full-text search over every transcript, from the engine's index (any thread but the engine's).

The engine writes one row per prompt, answer and tool call (its command or summary) into the
index's ``search_docs`` / ``search_text`` (FTS5) tables, in the same transaction as the stream's
progress (see ``core/index.py``). This module reads them through a read-only connection of its
own, so a search never waits for the engine nor holds it up.

A query is the user's words, never FTS5 syntax: each word is quoted (quotes doubled inside), the
words must all match, and the last one also matches as a prefix (search as you type). Hits come
best first (bm25), each with a snippet as plain-text segments, the matches marked, for the
front-end to show without parsing any markup.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbar.core.model import Agent, SessionKey, iso

MAX_QUERY_CHARS = 500
MAX_WORDS = 16
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
SNIPPET_TOKENS = 16
MARK_START, MARK_END = "\x02", "\x03"  # never stored: ``clean_text`` removes them


class Kind:
    PROMPT = "prompt"
    ANSWER = "answer"
    TOOL = "tool"


def clean_text(text: str) -> str:
    """Text as stored for search: the snippet markers removed."""
    if MARK_START in text or MARK_END in text:
        return text.replace(MARK_START, " ").replace(MARK_END, " ")
    return text


def fts_query(text: str) -> str | None:
    """The FTS5 query for what a person typed: every word quoted, the last one a prefix too.
    None when there is nothing to search for."""
    words = [w for w in text[:MAX_QUERY_CHARS].split() if any(c.isalnum() for c in w)]
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
        }


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
    return tuple((" ".join(t.split()) if not m else t, m) for t, m in segments if t)


class Searcher:
    """Searches the index file through a read-only connection (one query at a time)."""

    def __init__(self, index_path: Path) -> None:
        self.path = index_path
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
    ) -> list[Hit]:
        query = fts_query(text)
        if query is None:
            return []
        limit = max(1, min(limit, MAX_LIMIT))
        sql = (
            "SELECT d.agent, d.session_id, d.thread, d.offset, d.kind, d.ts,"
            f" snippet(search_text, 0, '{MARK_START}', '{MARK_END}', '…', {SNIPPET_TOKENS}),"
            " bm25(search_text)"
            " FROM search_text JOIN search_docs d ON d.id = search_text.rowid"
            " WHERE search_text MATCH ?"
        )
        args: list[Any] = [query]
        if agent is not None:
            sql += " AND d.agent = ?"
            args.append(str(agent))
        if session_id is not None:
            sql += " AND d.session_id = ?"
            args.append(session_id)
        sql += " ORDER BY bm25(search_text), d.ts DESC LIMIT ?"
        args.append(limit)
        with self._lock:
            try:
                rows = self._connection().execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc) or "unable to open" in str(exc):
                    self._reset()
                    return []
                raise
        return [
            Hit(
                key=SessionKey(Agent(row[0]), row[1]),
                thread=row[2] or "main",
                offset=row[3],
                kind=row[4],
                ts=row[5],
                snippet=snippet_segments(row[6] or ""),
                score=-float(row[7]),
            )
            for row in rows
        ]

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
                    "SELECT agent, session_id, kind, count(*) FROM search_docs"
                    " GROUP BY agent, session_id, kind"
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
