"""One-time codes for opening pages: a code in a page's address is traded once, within its
lifetime, for the server's cookie, so no long-lived secret ever sits in a browser's address bar
or history, a window's URL or a process's arguments (any thread; one lock).

Whoever holds the token (the tray, ``agentbar window``, the CLI) asks for a code
(``POST /api/codes``) and opens ``/?code=CODE``; the server answers with the cookie and a
redirect to the same page without the code. A code works once, for ``DEFAULT_SECONDS``
(at most ``MAX_SECONDS`` when asked), and only on the server that made it.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable

DEFAULT_SECONDS = 60.0
MAX_SECONDS = 600.0  # a code printed for a person to open by hand
MAX_CODES = 256  # outstanding codes kept; the oldest is dropped past this


class CodeBook:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._codes: OrderedDict[str, float] = OrderedDict()  # code -> expiry

    def issue(self, seconds: float = DEFAULT_SECONDS) -> str:
        """A fresh code, good once for ``seconds`` (clamped to 1..``MAX_SECONDS``)."""
        seconds = min(max(seconds, 1.0), MAX_SECONDS)
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._expire()
            self._codes[code] = self._clock() + seconds
            while len(self._codes) > MAX_CODES:
                self._codes.popitem(last=False)
        return code

    def redeem(self, code: str) -> bool:
        """True once for a code this book issued and that has not expired; it is spent
        either way."""
        with self._lock:
            self._expire()
            found = None
            for known in self._codes:  # compared in constant time, never looked up by value
                if hmac.compare_digest(known.encode(), code.encode()):
                    found = known
            if found is None:
                return False
            del self._codes[found]
            return True

    def outstanding(self) -> int:
        with self._lock:
            self._expire()
            return len(self._codes)

    def _expire(self) -> None:
        now = self._clock()
        for code in [c for c, until in self._codes.items() if until <= now]:
            del self._codes[code]


def with_code(origin: str, path: str, code: str) -> str:
    """``origin`` + ``path`` with ``code`` added to its query: the address that opens it."""
    joiner = "&" if "?" in path else "?"
    return f"{origin}{path}{joiner}{urllib.parse.urlencode({'code': code})}"
