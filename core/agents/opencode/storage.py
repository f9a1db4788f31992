"""opencode's JSON storage, the layout before its database (1.1 and earlier), read-only
(engine thread).

``<data>/storage/session/<project>/<session>.json``, ``storage/message/<session>/<msg>.json``
and ``storage/part/<message>/<part>.json``: one file per object, rewritten whole when the
object changes (tool parts as they run, messages as they complete). A file is read again when
its size or modification time moved; a half-written file (not JSON yet) is left for the next
change. Database releases migrate this folder once and stop writing it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import orjson

from ...sources.base import walk_paths
from .rows import Json, MessageRow, PartRow, Rows, SessionRow

log = logging.getLogger(__name__)

STORAGE_DIR = "storage"
KINDS = ("session", "message", "part")


class StorageReader:
    """The objects whose files changed since the last read (all of them on the first)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / STORAGE_DIR
        self._seen: dict[str, tuple[int, int]] = {}  # path -> (size, mtime_ns) when read

    def kind_of(self, path: Path) -> str | None:
        """``session``, ``message`` or ``part`` for a file of this layout, else None."""
        try:
            relative = path.relative_to(self.root)
        except ValueError:
            return None
        parts = relative.parts
        if len(parts) == 3 and parts[0] in KINDS and parts[2].endswith(".json"):
            return parts[0]
        return None

    def read(self, paths: list[Path] | None = None) -> Rows:
        """The changed objects among ``paths``, or among every file of the layout (None)."""
        rows = Rows()
        candidates = (
            [Path(p) for p in walk_paths(self.root, max_depth=3)] if paths is None else paths
        )
        for path in sorted(candidates, key=lambda p: p.name):
            kind = self.kind_of(path)
            if kind is not None:
                self._read_one(path, kind, rows)
        return rows

    def _read_one(self, path: Path, kind: str, rows: Rows) -> None:
        key = str(path)
        try:
            st = os.stat(path)
            if self._seen.get(key) == (st.st_size, st.st_mtime_ns):
                return
            data = path.read_bytes()
        except FileNotFoundError:
            self._seen.pop(key, None)
            return
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            return
        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError:
            return  # half-written: the write that completes it is another change
        self._seen[key] = (st.st_size, st.st_mtime_ns)
        if not isinstance(body, dict):
            return
        object_id = body.get("id")
        if not isinstance(object_id, str):
            return
        if kind == "session":
            times = _obj(body.get("time"))
            rows.sessions.append(
                SessionRow(
                    id=object_id,
                    directory=_str(body.get("directory")),
                    title=_str(body.get("title")),
                    parent_id=_str(body.get("parentID")),
                    version=_str(body.get("version")),
                    created_ms=_int(times.get("created")),
                    updated_ms=_int(times.get("updated")),
                )
            )
        elif kind == "message":
            session_id = _str(body.get("sessionID")) or path.parent.name
            rows.messages.append(MessageRow(id=object_id, session_id=session_id, data=body))
        else:
            owner = _str(body.get("sessionID"))
            message_id = _str(body.get("messageID")) or path.parent.name
            if owner is not None:
                rows.parts.append(
                    PartRow(id=object_id, message_id=message_id, session_id=owner, data=body)
                )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _obj(value: object) -> Json:
    """``value`` when it is a JSON object, else an empty one (fields of unknown shape)."""
    return value if isinstance(value, dict) else {}
