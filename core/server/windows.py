"""What the session windows show, as they report it, and who can open one (any thread: the
server's handlers write, the tray reads; one lock).

Each window says which page it shows and whether it is in front, again every few seconds; a
report older than ``STALE_SECONDS`` no longer counts (a window that died without a word). The
tray asks ``in_front`` so it does not notify about a session the user is looking at. Whoever
can open a window (the tray, the ``agentbar window`` that runs this server) registers an
``opener``; ``agentbar`` started a second time asks the server to open the window through it
and exits. Without an opener, a page asked for goes to the window that reported last: its next
report (within a second) hears it and the window shows it, so one window is reused whoever
serves it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

# The pages a window may report or be asked to open: the board, search, a session's replay, a
# launched task's terminal.
PAGE = re.compile(
    r"^/(?:board|search)?$|^/session/[a-z][a-z0-9_-]{0,31}/[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
    r"|^/terminal/[0-9a-f]{1,32}$"
)
WINDOW_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
STALE_SECONDS = 15.0
MAX_WINDOWS = 32

# Shows a page in a window (it only queues the request); False: it cannot (its window is gone).
Opener = Callable[[str], bool | None]


@dataclass(frozen=True, slots=True)
class Shown:
    window: str
    path: str
    focused: bool
    at: float  # monotonic


class WindowLink:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._shown: dict[str, Shown] = {}
        self._opener: Opener | None = None
        self._asked: dict[str, str] = {}  # window -> the page it is asked to show

    def report(self, window: str, path: str | None, focused: bool) -> str | None:
        """``window`` shows ``path`` (None: it closed): the page it is asked to show instead, if
        any (once). Raises ValueError for a bad id or page."""
        if not WINDOW_ID.match(window):
            raise ValueError("bad window id")
        if path is not None and not PAGE.match(path):
            raise ValueError("not a page of this server")
        with self._lock:
            self._expire()
            asked = self._asked.pop(window, None)
            if path is None:
                self._shown.pop(window, None)
                return None
            if window in self._shown or len(self._shown) < MAX_WINDOWS:
                self._shown[window] = Shown(window, path, focused, self._clock())
            return asked

    def shown(self) -> list[Shown]:
        with self._lock:
            self._expire()
            return sorted(self._shown.values(), key=lambda s: s.window)

    def in_front(self) -> frozenset[str]:
        """The pages shown by windows that have the focus."""
        return frozenset(s.path for s in self.shown() if s.focused)

    def _expire(self) -> None:
        now = self._clock()
        for key in [k for k, s in self._shown.items() if now - s.at > STALE_SECONDS]:
            del self._shown[key]
            self._asked.pop(key, None)

    def set_opener(self, opener: Opener | None) -> None:
        with self._lock:
            self._opener = opener

    @property
    def can_open(self) -> bool:
        with self._lock:
            self._expire()
            return self._opener is not None or bool(self._shown)

    def open(self, path: str) -> bool:
        """Ask the opener to show ``path``, else the window that reported last; False when
        there is neither."""
        if not PAGE.match(path):
            raise ValueError("not a page of this server")
        with self._lock:
            opener = self._opener
            if opener is None:
                self._expire()
                if not self._shown:
                    return False
                latest = max(self._shown.values(), key=lambda s: s.at)
                self._asked[latest.window] = path
                return True
        return opener(path) is not False
