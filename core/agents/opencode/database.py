"""opencode's SQLite database, read strictly read-only and briefly (engine thread).

opencode (1.2 and later) keeps every session in one database in WAL mode,
``$XDG_DATA_HOME/opencode/opencode.db``, and writes to it while it runs. agentbar must never
get in its way: the file is opened with ``mode=ro`` (no write lock is ever taken; SQLite only
marks its read in opencode's ``-shm`` index, as every reader of a WAL database does), each read
is one short transaction of three ``SELECT``s, and the connection is closed right after, so no
lock or snapshot is held between reads (a long-lived reader would also keep opencode's
checkpoints from shrinking the WAL).
When no ``-wal`` file is there (opencode is not running, and its last connection folded the
WAL back in), a ``mode=ro`` reader would create ``-wal`` and ``-shm`` itself and leave them
behind (seen with SQLite 3.40): then the database is opened ``immutable`` instead, which
creates nothing and locks nothing, and holds everything committed.
When opencode holds the database at that moment (``SQLITE_BUSY``, a recovery), the read gives
up at once and the next change or tick tries again: agentbar waits, opencode never does.

What changed is found by the rows' ``time_updated`` (epoch milliseconds): every row at or
after the last seen moment, less a margin for a writer whose clock value was taken before
another's commit. Rows read twice cost nothing: the translator says each thing once.
``time_updated`` has no index, so after the first read the ``message`` and ``part`` rows are
looked up through their ``session_id`` index, for the sessions that can be changing: those
whose own row moved (opencode touches it at every prompt), those with rows seen in the last
minutes, and those with an assistant message not yet completed. A full pass still runs once a
minute, for anything else (``bench/bench_opencode.py``: a read of a 13 MB database went from
57 ms to a few).

A start of agentbar resumes from the last run's cursor (``cursor()``, saved in agentbar's
index with the sessions it covers; ``resume()``): its first read finds the rows changed since,
and a session is then read whole the first time one of its rows shows up in this run, with
every session of its tree (the parent and its sub-agents: agentbar folds them as one), since
the translator knows nothing of it yet. Sessions unchanged since the last run are not read at
all: their state is the one the index kept. A cursor of another file (the database deleted
and created again) is not taken.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from .rows import Json, MessageRow, PartRow, Rows, SessionRow

log = logging.getLogger(__name__)

# A row may be committed with a time_updated a little older than one already read (its value
# was taken before another writer's commit): read back this far.
OVERLAP_MS = 5_000
ACTIVE_MS = 600_000  # a session with rows this recent is read at every change
FULL_PASS_S = 60.0  # the full pass that catches whatever the active set missed
IN_CHUNK = 400  # session ids per IN (...) list
BUSY_TIMEOUT_S = 0.05  # how long a read may wait for opencode before it gives up for now

_SESSIONS = (
    "SELECT id, directory, title, parent_id, version, time_created, time_updated"
    " FROM session WHERE time_updated >= ? ORDER BY time_updated, id"
)
_MESSAGES = "SELECT id, session_id, time_updated, data FROM message WHERE time_updated >= ?"
_PARTS = "SELECT id, message_id, session_id, time_updated, data FROM part WHERE time_updated >= ?"
_IN_SESSIONS = " AND session_id IN ({})"
_SESSIONS_IN = (
    "SELECT id, directory, title, parent_id, version, time_created, time_updated"
    " FROM session WHERE id IN ({})"
)
_TREES = "SELECT id, parent_id FROM session"


class DatabaseBusy(Exception):
    """opencode held the database; nothing was read (try again later)."""


def read_only_uri(path: Path, *, immutable: bool = False) -> str:
    """``file:`` URI opening ``path`` read-only; ``immutable``: without locks or WAL files
    (only for a database nobody is writing)."""
    quoted = path.resolve().as_posix().replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")


class DatabaseReader:
    """The rows changed since the last read, one short read-only transaction at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.since_ms = 0  # the newest time_updated read so far
        self.reads = 0
        self.busy = 0  # reads that found opencode holding the database
        self.full_passes = 0
        self._last_full = 0.0  # time.monotonic() of the last full pass
        self._seen_at: dict[str, int] = {}  # session -> newest time_updated of its rows
        self._open: set[str] = set()  # sessions with an assistant message not completed
        self._ino = 0  # the database file's, at the last read
        self._resumed = False  # since_ms came from the last run: sessions are read whole...
        self._known: set[str] = set()  # ...the first time they show up (these were)

    def cursor(self) -> dict[str, Any]:
        """Where the next run may resume (empty before the first read)."""
        return {"since_ms": self.since_ms, "ino": self._ino} if self.since_ms else {}

    def resume(self, cursor: dict[str, Any]) -> bool:
        """Resume from the last run's ``cursor()``; False (read everything) when it is not
        this file's or not a cursor."""
        since, ino = cursor.get("since_ms"), cursor.get("ino")
        if not isinstance(since, int) or since <= 0 or self.reads or ino != _inode(self.path):
            return False
        self.since_ms, self._ino, self._resumed = since, ino, True
        return True

    def read(self) -> Rows:
        """Rows updated since the last read (all on the first). Raises ``DatabaseBusy`` when
        opencode holds the database, ``sqlite3.Error`` for a file that is not one."""
        floor = max(0, self.since_ms - OVERLAP_MS) if self.since_ms else 0
        full = not self.full_passes or time.monotonic() - self._last_full > FULL_PASS_S
        try:
            self._ino = _inode(self.path)
            idle = not Path(f"{self.path}-wal").exists()
            conn = sqlite3.connect(
                read_only_uri(self.path, immutable=idle), uri=True, timeout=BUSY_TIMEOUT_S,
                isolation_level=None, check_same_thread=False,
            )  # fmt: skip
        except sqlite3.OperationalError as exc:
            raise _busy_or(exc) from exc
        try:
            conn.execute("BEGIN")  # one snapshot for the three tables, ended at once
            sessions = conn.execute(_SESSIONS, (floor,)).fetchall()
            if full:
                messages = conn.execute(_MESSAGES, (floor,)).fetchall()
                parts = conn.execute(_PARTS, (floor,)).fetchall()
            else:
                active = self._active({str(row[0]) for row in sessions})
                messages, parts = [], []
                for chunk in _chunks(sorted(active), IN_CHUNK):
                    where = _IN_SESSIONS.format(",".join("?" * len(chunk)))
                    messages += conn.execute(_MESSAGES + where, (floor, *chunk)).fetchall()
                    parts += conn.execute(_PARTS + where, (floor, *chunk)).fetchall()
            if self._resumed:
                sessions, messages, parts = self._whole(conn, sessions, messages, parts)
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise _busy_or(exc) from exc
        finally:
            conn.close()
        self.reads += 1
        if full:
            self.full_passes += 1
            self._last_full = time.monotonic()
        messages.sort(key=lambda row: str(row[0]))
        parts.sort(key=lambda row: str(row[0]))
        rows = Rows()
        newest = self.since_ms
        for sid, directory, title, parent, version, created, updated in sessions:
            newest = max(newest, _int(updated))
            rows.sessions.append(
                SessionRow(
                    id=str(sid),
                    directory=_str(directory),
                    title=_str(title),
                    parent_id=_str(parent),
                    version=_str(version),
                    created_ms=_int(created) or None,
                    updated_ms=_int(updated) or None,
                )
            )
        for mid, sid, updated, data in messages:
            newest = max(newest, _int(updated))
            self._saw(str(sid), _int(updated))
            body = _json(data)
            if body is not None:
                rows.messages.append(MessageRow(id=str(mid), session_id=str(sid), data=body))
                self._track_open(str(sid), body)
        for pid, mid, sid, updated, data in parts:
            newest = max(newest, _int(updated))
            self._saw(str(sid), _int(updated))
            body = _json(data)
            if body is not None:
                rows.parts.append(
                    PartRow(id=str(pid), message_id=str(mid), session_id=str(sid), data=body)
                )
        self.since_ms = newest
        return rows

    def _whole(
        self, conn: sqlite3.Connection, sessions: list[Any], messages: list[Any], parts: list[Any]
    ) -> tuple[list[Any], list[Any], list[Any]]:
        """The rows read, with every row of the trees of sessions seen for the first time in
        this run (after a resumed cursor: see the module docstring)."""
        seen = {str(r[0]) for r in sessions} | {str(r[1]) for r in messages}
        new = (seen | {str(r[2]) for r in parts}) - self._known
        if not new:
            return sessions, messages, parts
        trees = _trees(conn.execute(_TREES).fetchall(), new)
        self._known |= trees
        for chunk in _chunks(sorted(trees), IN_CHUNK):
            marks = ",".join("?" * len(chunk))
            sessions += conn.execute(_SESSIONS_IN.format(marks), chunk).fetchall()
            where = _IN_SESSIONS.format(marks)
            messages += conn.execute(_MESSAGES + where, (0, *chunk)).fetchall()
            parts += conn.execute(_PARTS + where, (0, *chunk)).fetchall()
        return (
            sorted(_unique(sessions), key=lambda r: (_int(r[6]), str(r[0]))),
            list(_unique(messages)),
            list(_unique(parts)),
        )

    def _active(self, moved: set[str]) -> set[str]:
        """Sessions whose rows may have changed since the last read."""
        horizon = self.since_ms - ACTIVE_MS
        for sid in [sid for sid, at in self._seen_at.items() if at < horizon]:
            del self._seen_at[sid]
        return moved | set(self._seen_at) | self._open

    def _saw(self, session_id: str, updated: int) -> None:
        if updated > self._seen_at.get(session_id, 0):
            self._seen_at[session_id] = updated

    def _track_open(self, session_id: str, body: Json) -> None:
        times = body.get("time")
        done = isinstance(times, dict) and times.get("completed") is not None
        if body.get("role") == "assistant" and not done and body.get("error") is None:
            self._open.add(session_id)
        elif body.get("role") == "assistant":
            self._open.discard(session_id)


def _trees(pairs: Iterable[tuple[object, object]], sessions: set[str]) -> set[str]:
    """Every session id in the trees (parent, sub-agents, theirs) of ``sessions``."""
    parents = {str(sid): None if parent is None else str(parent) for sid, parent in pairs}

    def root(sid: str) -> str:
        seen = {sid}
        while (parent := parents.get(sid)) and parent not in seen:
            seen.add(parent)
            sid = parent
        return sid

    roots = {root(sid) for sid in sessions}
    return {sid for sid in parents if root(sid) in roots} | sessions


def _unique(rows: list[Any]) -> Iterable[Any]:
    """Rows by their id, each once (the first column)."""
    return {str(row[0]): row for row in rows}.values()


def _inode(path: Path) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _busy_or(exc: sqlite3.OperationalError) -> Exception:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return DatabaseBusy(str(exc))
    return exc


def _json(value: object) -> Json | None:
    if not isinstance(value, str | bytes):
        return None
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        log.warning("opencode row with data that is not JSON; skipped")
        return None
    return parsed if isinstance(parsed, dict) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
