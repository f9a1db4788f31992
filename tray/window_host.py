"""The tray's session window: one pywebview child process (``spawn``), started on demand and
pointed at a page of the tray's own server; asking again while it is open shows the new page in
the same window and brings it to the front (any thread; one lock).

Closing the window ends the child only; quitting the tray closes the window (its server is
gone).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import sys
import threading
from typing import Any

# What multiprocessing's Pipe() gives: a named pipe's ends on Windows, a socket pair elsewhere.
if sys.platform == "win32":
    from multiprocessing.connection import PipeConnection as Connection
else:
    from multiprocessing.connection import Connection

from agentbar.tray import window

log = logging.getLogger(__name__)


class WindowHost:
    def __init__(self, port: int, token: str, *, title: str = window.TITLE) -> None:
        self.port = port
        self.token = token
        self.title = title
        self._lock = threading.Lock()
        self._child: Any = None  # multiprocessing's SpawnProcess
        self._commands: Connection | None = None
        self._context = multiprocessing.get_context("spawn")

    def open(self, path: str = "/") -> None:
        url = window.page_url(self.port, self.token, path)
        with self._lock:
            if self._child is not None and self._child.is_alive() and self._commands is not None:
                try:
                    self._commands.send(url)
                    return
                except OSError:
                    log.info("the window stopped listening; opening a new one")
            self._close_locked()
            ours, theirs = self._context.Pipe()
            child = self._context.Process(
                target=window.window_main,
                args=(url, self.title, None, theirs),
                name="agentbar-window",
                daemon=True,
            )
            child.start()
            theirs.close()
            self._child, self._commands = child, ours

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._child is not None and self._child.is_alive()

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._close_locked(timeout)

    def _close_locked(self, timeout: float = 5.0) -> None:
        child, commands = self._child, self._commands
        self._child = self._commands = None
        if commands is not None:
            commands.close()  # the child's listener sees EOF and closes the window
        if child is not None:
            child.join(timeout)
            if child.is_alive():
                child.terminate()
                child.join(timeout)
            with contextlib.suppress(ValueError):
                child.close()
