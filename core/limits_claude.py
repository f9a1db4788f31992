"""Claude's usage windows from what agentbar's status-line link recorded (engine thread).

The link (``assets/statusline/``) writes Claude's latest status-line payload, as Claude handed
it, to ``<data dir>/limits/claude-status-line.json``; the file's time is when it was seen. This
reads it again when it changed. A file that is missing, too large or not that shape gives
no windows and no error: the link is opt-in, and the tray says when Claude's limits are unknown.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from .limits import LimitWindow, claude_windows, epoch

RECORD_NAME = "claude-status-line.json"  # the link's own name for it (agentbar_statusline_impl)
MAX_RECORD_BYTES = 64 * 1024
NOT_KNOWN = "Claude's limits are not known (agentbar hooks install --status-line --agent claude)"
NOT_SENT = (
    "Claude's limits are not known: Claude Code hands its status line none (it does for "
    "Claude.ai subscription logins, not API keys)"
)


def record_path(data_dir: Path) -> Path:
    return data_dir / "limits" / RECORD_NAME


class ClaudeStatusLineRecord:
    """The link's record, read again whenever its size or time changed (any thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int] | None = None
        self._lock = threading.Lock()  # the engine's tick and ``Engine.limits()`` callers
        self.recorded = False  # the link has recorded a payload (with windows or without)

    def read_if_changed(self) -> tuple[LimitWindow, ...]:
        with self._lock:
            return self._read_if_changed()

    def _read_if_changed(self) -> tuple[LimitWindow, ...]:
        try:
            info = os.stat(self.path)
        except OSError:
            return ()
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp == self._seen:
            return ()
        self._seen = stamp
        if info.st_size > MAX_RECORD_BYTES:
            return ()
        self.recorded = True
        return read_windows(self.path)


def read_windows(path: Path) -> tuple[LimitWindow, ...]:
    try:
        with path.open("rb") as fh:
            seen_at = epoch(os.fstat(fh.fileno()).st_mtime)
            data = json.loads(fh.read(MAX_RECORD_BYTES + 1))
    except (OSError, ValueError):
        return ()
    if seen_at is None:
        return ()
    return claude_windows(data, seen_at)
