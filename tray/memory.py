"""Gives the heap the process freed back to the system (glibc's ``malloc_trim``), so the tray's
resident memory follows what it holds rather than the high-water mark of the engine's catch-up
(a thread of its own, "agentbar-trim"; a no-op where there is no glibc).

Measured (bench/README.md): an engine that caught up on 2,000 sessions holds about 13 MB of
Python objects but keeps about 76 MB resident, the catch-up's freed arenas included; one trim
brings it to about 46 MB. The search index fills in slices after the catch-up, so the trim is
repeated now and then; each one takes milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

TRIM_SECONDS = 300.0


if sys.platform.startswith("linux"):

    def _malloc_trim() -> Callable[[int], int] | None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            trim = libc.malloc_trim
        except (OSError, AttributeError):  # musl and others: no malloc_trim
            return None
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int
        return trim

else:

    def _malloc_trim() -> Callable[[int], int] | None:
        """glibc's alone: elsewhere the allocator returns memory its own way."""
        return None


def trim() -> bool:
    """Return freed heap to the system now; False where that cannot be done."""
    release = _malloc_trim()
    if release is None:
        return False
    release(0)
    return True


class Trimmer:
    """Trims once ``ready`` is set (the engine caught up), then every ``every`` seconds."""

    def __init__(self, ready: threading.Event, every: float = TRIM_SECONDS) -> None:
        self.ready = ready
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentbar-trim", daemon=True)

    def start(self) -> None:
        if _malloc_trim() is not None:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        while not self.ready.wait(1.0):
            if self._stop.is_set():
                return
        while not self._stop.is_set():
            trim()
            self._stop.wait(self.every)
