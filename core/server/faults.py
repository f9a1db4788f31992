"""The server's faults in the log as a bounded trickle: one line per kind of fault, then a count
of the same kind at most once a minute, never a traceback per connection (any thread; one
lock).

A flood of connections or of odd requests must not turn into megabytes of log. ``FaultLog``
is what the server's own code reports to; ``quiet_library_logs`` puts the same rule on what
aiohttp and asyncio log (their "Error handling request" and accept errors carry a traceback
each): the first of a kind is logged in one line with the exception's type and message, the
rest are counted. A request aiohttp's parser refused (a bad request line, headers too long)
was answered with a 4xx and is the client's doing: not logged at all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

REPEAT_SECONDS = 60.0
MAX_DETAIL = 300  # characters of an exception's message kept in its one line
LIBRARY_LOGGERS = (
    "aiohttp.server",
    "aiohttp.web",
    "aiohttp.access",
    "aiohttp.websocket",
    "asyncio",
)


class FaultLog:
    def __init__(
        self,
        logger: logging.Logger,
        *,
        repeat_seconds: float = REPEAT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.repeat_seconds = repeat_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def allow(self, kind: str) -> int | None:
        """Whether a fault of ``kind`` may be logged now: the count of those held back since
        the last line (None: hold this one back too)."""
        now = self.clock()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.repeat_seconds:
                self._held[kind] = self._held.get(kind, 0) + 1
                return None
            self._last[kind] = now
            return self._held.pop(kind, 0)

    def note(self, kind: str, message: str, level: int = logging.WARNING) -> None:
        held = self.allow(kind)
        if held is None:
            return
        more = f" ({held} more like it since the last line)" if held else ""
        self.logger.log(level, "%s%s", message, more)


class _OneLinePerFault(logging.Filter):
    def __init__(self, faults: FaultLog) -> None:
        super().__init__()
        self.faults = faults

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        exc = record.exc_info[1] if record.exc_info else None
        if _client_fault(exc):
            return False  # a request the parser refused: answered with a 4xx, not our fault
        kind = f"{record.name}:{record.msg}:{type(exc).__name__ if exc else ''}"
        held = self.faults.allow(kind)
        if held is None:
            return False
        if exc is not None:
            detail = " ".join(str(exc).split())[:MAX_DETAIL]
            record.msg = f"{record.getMessage()}: {type(exc).__name__}: {detail}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        if held:
            record.msg = f"{record.getMessage()} ({held} more like it since the last line)"
            record.args = None
        return True


def _client_fault(exc: BaseException | None) -> bool:
    """An HTTP message aiohttp's parser refused with a 4xx (bad request line, headers too
    long, ...): the client's fault, answered already."""
    from aiohttp import http_exceptions  # noqa: PLC0415 - only when a fault is logged

    if not isinstance(exc, http_exceptions.HttpProcessingError):
        return False
    return 400 <= (exc.code or 400) < 500


_installed: list[_OneLinePerFault] = []
_install_lock = threading.Lock()


def quiet_library_logs() -> None:
    """Put the one-line-per-fault rule on aiohttp's and asyncio's loggers (once a process)."""
    with _install_lock:
        if _installed:
            return
        guard = _OneLinePerFault(FaultLog(logging.getLogger("agentbar.core.server")))
        for name in LIBRARY_LOGGERS:
            logging.getLogger(name).addFilter(guard)
        _installed.append(guard)
