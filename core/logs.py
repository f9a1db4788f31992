"""agentbar's log files: private (0600, on every rotation too), rotated at a size cap with a few
backups, and a flood of one fault written a bounded number of times (set up on the main thread
at start; the handlers run on whichever thread logs, under the handler's lock).

A fault repeated in a loop (a broken request over and over, a file that keeps failing) must
not fill the disk or bury everything else: each kind of record (the same logger, call site,
level and exception type) is written at most ``burst`` times per ``interval`` seconds; the rest
are counted, and one line says how many were left out: with the first record logged after that
interval (of any kind), or when the log is closed.
"""

from __future__ import annotations

import contextlib
import io
import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .privacy import FILE_MODE, narrow_open_file

LOG_FILE = "agentbar.log"
SERVE_LOG = "serve.log"  # a detached ``agentbar serve``'s standard error, and its log
MAX_BYTES = 2_000_000
BACKUPS = 2
BURST = 10  # records of one kind per interval
INTERVAL = 60.0  # seconds
MAX_KINDS = 512  # kinds remembered at once; the oldest is summed up and forgotten beyond

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """A ``RotatingFileHandler`` whose files are 0600 from their creation on, also after a
    rotation; with ``as_stderr``, file descriptor 2 follows the current file, so whatever the
    process writes to its standard error (a thread's traceback, a last word) lands there too
    and rotates with it."""

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = MAX_BYTES,
        backups: int = BACKUPS,
        as_stderr: bool = False,
    ) -> None:
        self.as_stderr = as_stderr
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.baseFilename, flags, FILE_MODE)
        narrow_open_file(fd)  # a file an older agentbar made wider
        if self.as_stderr:
            with contextlib.suppress(OSError):
                sys.stderr.flush()
                os.dup2(fd, 2)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


@dataclass(slots=True)
class _Kind:
    since: float
    name: str  # the logger's
    written: int = 0
    left_out: int = 0
    example: str = ""


Key = tuple[str, str, int, int, str]


class Throttled(logging.Handler):
    """Hands records to ``inner``, at most ``burst`` of one kind per ``interval`` seconds,
    then a line with how many more there were."""

    def __init__(
        self,
        inner: logging.Handler,
        *,
        burst: int = BURST,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner.level)
        self.inner = inner
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self._kinds: dict[Key, _Kind] = {}
        self._swept = clock()

    def setFormatter(self, fmt: logging.Formatter | None) -> None:
        self.inner.setFormatter(fmt)

    def emit(self, record: logging.LogRecord) -> None:
        now = self.clock()
        if now - self._swept >= self.interval:
            self._sum_up(lambda kind: now - kind.since >= self.interval)
            self._swept = now
        key = _key(record)
        kind = self._kinds.get(key)
        if kind is None or now - kind.since >= self.interval:
            if kind is not None:
                self._write_left_out(kind)
            kind = self._kinds[key] = _Kind(since=now, name=record.name)
            if len(self._kinds) > MAX_KINDS:
                self._write_left_out(self._kinds.pop(next(iter(self._kinds))))
        if kind.written >= self.burst:
            kind.left_out += 1
            return
        kind.written += 1
        if not kind.example:
            kind.example = _first_line(record)
        self.inner.handle(record)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.acquire()
            try:
                self._sum_up(lambda _kind: True)
            finally:
                self.release()
        self.inner.close()
        super().close()

    def _sum_up(self, over: Callable[[_Kind], bool]) -> None:
        for key, kind in list(self._kinds.items()):
            if over(kind):
                self._write_left_out(kind)
                del self._kinds[key]

    def _write_left_out(self, kind: _Kind) -> None:
        if not kind.left_out:
            return
        seconds = max(self.clock() - kind.since, 0.0)
        line = logging.LogRecord(
            name=kind.name,
            level=logging.WARNING,
            pathname=__file__,
            lineno=0,
            msg="… %d more like this suppressed in %.0f s: %s",
            args=(kind.left_out, seconds, kind.example),
            exc_info=None,
        )
        kind.left_out = 0
        self.inner.handle(line)


def _key(record: logging.LogRecord) -> Key:
    error = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
    return (record.name, record.pathname, record.lineno, record.levelno, error)


def _first_line(record: logging.LogRecord) -> str:
    try:
        text = record.getMessage()
    except Exception:  # a bad format string: the template says enough
        text = str(record.msg)
    return text.splitlines()[0][:200] if text else ""


def file_log(path: Path, *, level: int = logging.INFO, **options: Any) -> Throttled:
    """A private, rotated, throttled log at ``path`` (``options``: ``PrivateRotatingFile``'s)."""
    inner = PrivateRotatingFile(path, **options)
    inner.setLevel(level)
    handler = Throttled(inner)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(FORMAT))
    return handler


def stream_log(level: int) -> Throttled:
    """Standard error, throttled like the files."""
    inner = logging.StreamHandler()
    inner.setLevel(level)
    handler = Throttled(inner)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(FORMAT))
    return handler
