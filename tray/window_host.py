"""The tray's session window: one pywebview child process (``spawn``), started on demand and
pointed at a page of the tray's own server; asking again while it is open shows the new page in
the same window and brings it to the front. Where pywebview or its backends cannot be imported,
pages open in the default browser instead (any thread; one lock).

Closing the window ends the child only; quitting the tray closes the window (its server is
gone). Every page opens with a one-time code (``url_for``), never the token; the child gets the
token through multiprocessing's pipe, to report what it shows.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import threading
from typing import Any

from ..core.server.codes import DEFAULT_SECONDS, MAX_SECONDS
from . import browser, window
from .window import Channel

log = logging.getLogger(__name__)


class WindowHost:
    def __init__(self, url_for: window.UrlFor, token: str, *, title: str = window.TITLE) -> None:
        self.url_for = url_for
        self.token = token
        self.title = title
        self._lock = threading.Lock()
        self._child: Any = None  # multiprocessing's SpawnProcess
        self._commands: Channel | None = None
        self._context = multiprocessing.get_context("spawn")
        self.no_window: str | None = window.webview_problem()  # set: the browser it is

    def open(self, path: str = "/") -> None:
        url = self.url_for(path, DEFAULT_SECONDS)
        with self._lock:
            if self.no_window is None:
                self._show_locked(path, url)
                return
        self._browse(path, url)

    def _show_locked(self, path: str, url: str) -> None:
        if self._child is not None and self._child.is_alive() and self._commands is not None:
            try:
                self._commands.send(url)
                return
            except OSError:
                log.info("the window stopped listening; opening a new one")
        self._close_locked()
        ours, theirs = self._context.Pipe()
        reports, report_end = self._context.Pipe(duplex=False)
        child = self._context.Process(
            target=window.window_main,
            args=(url, self.title, None, theirs, self.token, report_end),
            name="agentbar-window",
            daemon=True,
        )
        child.start()
        theirs.close()
        report_end.close()
        self._child, self._commands = child, ours
        threading.Thread(
            target=self._watch_start,
            args=(reports, child, path, url),
            name="agentbar-window-start",
            daemon=True,
        ).start()

    def _watch_start(self, reports: Channel, child: Any, path: str, url: str) -> None:
        """The child's first word: its backend, or why there is none (then this page, and
        every later one, opens in the browser)."""
        try:
            kind, detail = window.first_report(reports, child)
        finally:
            reports.close()
        if kind == "ok":
            log.info("opened in pywebview (%s)", detail)
            return
        with self._lock:
            self.no_window = detail
        log.warning("no pywebview window (%s): pages open in the browser", detail)
        self._browse(path, url)

    def _browse(self, path: str, url: str) -> None:
        if browser.open_in_browser(url):
            log.info("opened in your browser (%s)", self.no_window)
            return
        by_hand = self.url_for(path, MAX_SECONDS)
        log.warning("%s", browser.by_hand(by_hand, int(MAX_SECONDS // 60)))

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
