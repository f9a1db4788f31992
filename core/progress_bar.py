"""The progress bar a cold ``agentbar status`` draws on a terminal's stderr while it reads the
history (and ``agentbar usage --host`` while the host's agentbar reads its own): one line,
redrawn in place, cleared at the end (its own thread, "agentbar-progress"; the line itself is
pure).

Only on a terminal: piped or redirected, stderr gets nothing and stdout is never touched. A
warm start (the index is there, the reading takes a moment) draws nothing: the bar waits
``GRACE_SECONDS`` before its first line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from .engine_messages import IndexProgress
from .progress_text import percent, reading_line, size, sizes

GRACE_SECONDS = 0.25
REDRAW_SECONDS = 0.2
BAR_CELLS = 20
CLEAR = "\r\x1b[K"  # back to the line's start, erase to its end
PREFIX = "agentbar: "  # this machine's own reading


def bar_line(progress: IndexProgress, seconds: float, prefix: str = PREFIX) -> str | None:
    """``agentbar: reading history [########------------] 42 %  1.3 of 3.1 GB  95 MB/s``, or
    None once the reading is done. ``seconds``: how long it has been reading (for the speed);
    ``prefix``: whose reading it is (``agentbar: box: `` for a remote host's)."""
    words = reading_line(progress)
    if words is None:
        return None
    if not progress.live_ready or progress.bytes_total <= 0:
        return f"{prefix}{words[0].lower()}{words[1:]} {int(seconds)} s"
    filled = round(progress.fraction * BAR_CELLS)
    bar = "#" * filled + "-" * (BAR_CELLS - filled)
    line = (
        f"{prefix}reading history [{bar}] {percent(progress):>2} %  "
        f"{sizes(progress.bytes_done, progress.bytes_total)}"
    )
    if seconds > 0 and progress.bytes_done > 0:
        line += f"  {size(int(progress.bytes_done / seconds))}/s"
    return line


def wanted(err: TextIO) -> bool:
    """Whether ``err`` is a terminal that can redraw a line (not a pipe, not a dumb one)."""
    try:
        tty = err.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


class ProgressBar:
    """``with ProgressBar(app.progress, sys.stderr):`` around the reading. It reads
    ``progress()`` (the latest published value, any thread) every ``REDRAW_SECONDS``, so it
    moves even when the engine runs on the same thread as the caller. ``prefix`` as
    ``bar_line``'s."""

    def __init__(
        self,
        progress: Callable[[], IndexProgress],
        err: TextIO,
        *,
        grace: float = GRACE_SECONDS,
        columns: Callable[[], int] = lambda: shutil.get_terminal_size((80, 24)).columns,
        prefix: str = PREFIX,
    ) -> None:
        self._progress = progress
        self._prefix = prefix
        self._err = err
        self._grace = grace
        self._columns = columns
        self._stop = threading.Event()
        self._drawn = ""  # the line on the terminal now ("": none)
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __enter__(self) -> ProgressBar:
        self._started = time.monotonic()
        if wanted(self._err):
            self._thread = threading.Thread(target=self._run, name="agentbar-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        if self._drawn:
            self._write(CLEAR)

    def _run(self) -> None:
        if self._stop.wait(self._grace):
            return
        while True:
            line = bar_line(self._progress(), time.monotonic() - self._started, self._prefix)
            if line is not None:
                line = line[: max(self._columns() - 1, 10)]  # the last column wraps on some
                if line != self._drawn and self._write(CLEAR + line):
                    self._drawn = line
            elif self._drawn:
                self._write(CLEAR)
                self._drawn = ""
            if self._stop.wait(REDRAW_SECONDS):
                return

    def _write(self, text: str) -> bool:
        with contextlib.suppress(OSError, ValueError):  # a terminal gone: nothing to draw on
            self._err.write(text)
            self._err.flush()
            return True
        return False
