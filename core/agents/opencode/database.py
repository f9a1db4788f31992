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
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import orjson

from agentbar.core.agents.opencode.rows import Json, MessageRow, PartRow, Rows, SessionRow

log = logging.getLogger(__name__)

# A row may be committed with a time_updated a little older than one already read (its value
# was taken before another writer's commit): read back this far.
OVERLAP_MS = 5_000
BUSY_TIMEOUT_S = 0.05  # how long a read may wait for opencode before it gives up for now

_SESSIONS = (
    "SELECT id, directory, title, parent_id, version, time_created, time_updated"
    " FROM session WHERE time_updated >= ? ORDER BY time_updated, id"
)
_MESSAGES = (
    "SELECT id, session_id, time_updated, data FROM message"
    " WHERE time_updated >= ? ORDER BY time_created, id"
)
_PARTS = (
    "SELECT id, message_id, session_id, time_updated, data FROM part"
    " WHERE time_updated >= ? ORDER BY id"
)


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

    def read(self) -> Rows:
        """Rows updated since the last read (all on the first). Raises ``DatabaseBusy`` when
        opencode holds the database, ``sqlite3.Error`` for a file that is not one."""
        floor = max(0, self.since_ms - OVERLAP_MS) if self.since_ms else 0
        try:
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
            messages = conn.execute(_MESSAGES, (floor,)).fetchall()
            parts = conn.execute(_PARTS, (floor,)).fetchall()
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise _busy_or(exc) from exc
        finally:
            conn.close()
        self.reads += 1
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
            body = _json(data)
            if body is not None:
                rows.messages.append(MessageRow(id=str(mid), session_id=str(sid), data=body))
        for pid, mid, sid, updated, data in parts:
            newest = max(newest, _int(updated))
            body = _json(data)
            if body is not None:
                rows.parts.append(
                    PartRow(id=str(pid), message_id=str(mid), session_id=str(sid), data=body)
                )
        self.since_ms = newest
        return rows


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
