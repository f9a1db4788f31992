"""``agentbar window [SESSION_ID]``: the session window (board, replay, search): pywebview in a
child process when pywebview and one of its backends can be imported, else the user's default
browser (this module's commands run on the main thread; the window owns the main thread of its
own child, started with ``spawn``).

If an agentbar server runs (``<data dir>/server.json`` names a live process that answers), the
page opens on it; otherwise this process runs the engine, the server and a task manager
itself, and stops them when the window closes (or, in a browser, at Ctrl-C; agents launched
from the page run on). Closing the window never stops a server that runs elsewhere (the tray,
``agentbar serve``). Pages open with a one-time code the server trades for its cookie, never
with the token; the window child gets the token (to report what it shows) through
multiprocessing's pipe, not its arguments.

The child checks its backend before anything else (GTK with WebKit2 or Qt WebEngine on Linux,
Cocoa on macOS, EdgeChromium on Windows) and reports the one it found, or why none, on a pipe:
the parent says in one line which it used.

The child's side is ``tray/window_child.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import logging
import multiprocessing
import os
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..core.app import Agentbar
from ..core.config import Settings
from ..core.launch.client import ApiError, Client, NoServer
from ..core.server.codes import DEFAULT_SECONDS, MAX_SECONDS
from .browser import by_hand, open_in_browser
from .window_child import HEALTH_TIMEOUT, Channel, NoBackend, webview_backend, window_main

__all__ = ["Channel", "NoBackend", "webview_backend", "window_main"]  # the child's, for callers

log = logging.getLogger(__name__)

TITLE = "agentbar"
OPENING = "opening agentbar…"
START_SECONDS = 60.0  # the child says which backend it found (or none) within this

# (path, seconds) -> an address that opens the page once, within that many seconds
UrlFor = Callable[[str, float], str]


def add_parser(commands: Any) -> None:
    window = commands.add_parser(
        "window",
        help="open the session window (board, replay, search) on the running agentbar",
        description="Open agentbar's window. Uses the agentbar server that runs (tray or "
        "'agentbar serve'); without one, runs the engine and the server until the window "
        "closes (in a browser, when pywebview cannot open a window: until Ctrl-C).",
    )
    window.add_argument(
        "session_id",
        nargs="?",
        metavar="SESSION_ID",
        help="open this session's replay (its id or a unique prefix of it)",
    )
    # Opens the window, waits for its page, writes what the page shows as JSON and closes it:
    # how the smoke test (and anyone checking a desktop) sees that the window really works.
    window.add_argument("--probe", metavar="FILE", help=argparse.SUPPRESS)


def run(args: argparse.Namespace, settings: Settings, err: TextIO | None = None) -> int:
    err = err or sys.stderr
    problem = display_problem()
    if problem is not None:
        print(f"agentbar: {problem}", file=err)
        return 2
    probe = Path(args.probe) if args.probe else None
    print(f"agentbar: {OPENING}", file=err, flush=True)  # at once: the window takes a moment
    server = running_server(settings)
    if server is not None:
        try:
            path = target_path(lambda: server_sessions(server), args.session_id)
        except LookupError as exc:
            print(f"agentbar: {exc}", file=err)
            return 1
        if probe is None and ask_to_open(server, path) == HANDED_OVER:
            print(
                f"agentbar: shown in the window of the running agentbar (pid {server.pid})",
                file=err,
            )
            return 0
        try:
            return show(server_pages(server), path, probe=probe, err=err)
        except (ApiError, OSError) as exc:  # it stopped, or an agentbar without codes
            print(
                f"agentbar: the running agentbar (pid {server.pid}) gave no address to open "
                f"({exc}); restart it (agentbar quit) and try again",
                file=err,
            )
            return 1
    return serve_and_open(settings, args.session_id, probe=probe, err=err)


@dataclass(frozen=True, slots=True)
class Pages:
    """One server's pages: how to make an address that opens one, and the token a window
    reports to the server with."""

    url_for: UrlFor
    token: str


def server_pages(server: Client) -> Pages:
    return Pages(lambda path, seconds: server.open_url(path, seconds=seconds), server.token)


HANDED_OVER = 202  # POST /api/window/open: a window there shows the page


def ask_to_open(server: Client, path: str) -> int:
    """``POST /api/window/open`` on ``server``: the HTTP status (0: it did not answer)."""
    try:
        status, _ = server.call("POST", "/api/window/open", {"path": path}, timeout=HEALTH_TIMEOUT)
    except ApiError as exc:
        return exc.status
    except OSError:
        return 0
    return status


def show(
    pages: Pages,
    path: str,
    *,
    probe: Path | None,
    err: TextIO,
    serving: bool = False,
    started: StartedWindow | None = None,
) -> int:
    """``path`` in a pywebview window (``started``: the one already showing the loading page),
    else in the default browser, else an address to open by hand; one line says which.
    ``serving``: this process runs the server, so after a browser opened the page it serves
    until Ctrl-C."""
    reason = webview_problem()
    if reason is None:
        outcome = open_window(
            pages.url_for(path, DEFAULT_SECONDS),
            pages.token,
            probe=probe,
            on_open=lambda name: print(
                f"agentbar: opened in pywebview ({name})", file=err, flush=True
            ),
            started=started,
        )
        if outcome.backend is not None:
            return outcome.status
        reason = outcome.reason
    if probe is not None:
        print(f"agentbar: no window to probe ({reason})", file=err)
        return 2
    if open_in_browser(pages.url_for(path, DEFAULT_SECONDS)):
        print(f"agentbar: opened in your browser ({reason})", file=err, flush=True)
    else:
        url = pages.url_for(path, MAX_SECONDS)
        print(f"agentbar: {reason}; {by_hand(url, int(MAX_SECONDS // 60))}", file=err, flush=True)
    if serving:
        print("agentbar: serving it until you press Ctrl-C", file=err, flush=True)
        _wait_for_interrupt()
    return 0


def _wait_for_interrupt() -> None:
    stop = threading.Event()
    with contextlib.suppress(KeyboardInterrupt):
        while not stop.wait(0.5):
            pass


# -- can a window open here --------------------------------------------------------------------


def display_problem(env: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no window and no browser can open here (one line), or None."""
    env = dict(os.environ) if env is None else env
    platform = platform or sys.platform
    linux_like = platform.startswith("linux") or "bsd" in platform
    if linux_like and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return (
            "no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "run 'agentbar serve' and open its address in a browser"
        )
    return None


def webview_problem(find: Callable[[str], object] = importlib.util.find_spec) -> str | None:
    """Why pywebview surely cannot open a window (cheap: nothing imported), or None: it may,
    and the window's child finds out for sure (``webview_backend``)."""
    if find("webview") is None:
        return "pywebview not installed"
    return None


# -- finding the server ------------------------------------------------------------------------


def running_server(settings: Settings) -> Client | None:
    """The agentbar ``server.json`` names, if it answers with that token."""
    try:
        return Client.find(settings, timeout=HEALTH_TIMEOUT)
    except NoServer:
        return None


def server_sessions(server: Client) -> list[tuple[str, str]]:
    doc = server.request("GET", "/api/sessions?all=1", timeout=HEALTH_TIMEOUT)
    return [(s["agent"], s["session_id"]) for s in doc.get("sessions", [])]


def target_path(sessions: Callable[[], list[tuple[str, str]]], wanted: str | None) -> str:
    """The page to open: the board, or the replay of the session ``wanted`` names (its id or a
    unique prefix of it, in either agent)."""
    if not wanted:
        return "/"
    known = sessions()
    exact = [s for s in known if s[1] == wanted]
    found = exact or [s for s in known if s[1].startswith(wanted)]
    if not found:
        raise LookupError(f"no session {wanted!r}")
    if len(found) > 1:
        names = ", ".join(sorted(f"{a}:{i}" for a, i in found)[:5])
        raise LookupError(f"{wanted!r} names {len(found)} sessions ({names}): give more of it")
    agent, session_id = found[0]
    return f"/session/{urllib.parse.quote(agent)}/{urllib.parse.quote(session_id)}"


# -- running one ourselves ---------------------------------------------------------------------


def serve_and_open(
    settings: Settings, wanted: str | None, *, probe: Path | None, err: TextIO
) -> int:
    """No server runs: the engine, the server and a task manager in this process, for as long as
    the window. Agents launched, resumed or forked from the window run on after it closes (a
    keeper holds their terminals; the next agentbar takes them back)."""
    # The window opens on its loading page now, while the engine and the server start.
    started = StartedWindow(probe=probe) if webview_problem() is None else None
    app = Agentbar.open(settings)
    listening = False
    try:
        with app.serving() as server:
            listening = True
            app.start()
            if wanted:
                app.wait_ready()
            try:
                path = target_path(app.session_ids, wanted)
            except LookupError as exc:
                print(f"agentbar: {exc}", file=err)
                return 1
            pages = Pages(
                lambda page, seconds: server.open_url(page, seconds=seconds), server.token
            )
            if started is not None:
                # Its first page before anything else, then a second ``agentbar window``
                # brings it to the front on its page.
                started.point(pages.url_for(path, DEFAULT_SECONDS), pages.token)
                window_started = started
                app.windows.set_opener(
                    lambda page: _hand(window_started, pages.url_for(page, DEFAULT_SECONDS))
                )
            return show(pages, path, probe=probe, err=err, serving=True, started=started)
    except OSError as exc:
        if listening:
            raise  # not the socket
        print(f"agentbar: cannot listen on 127.0.0.1: {exc.strerror or exc}", file=err)
        return 1
    finally:
        if started is not None:
            started.close()
        app.close(keep_tasks=True)


def _hand(started: StartedWindow, url: str) -> bool:
    """The opener of a window of one's own: False once it is gone (no backend, or closed)."""
    return started.child.is_alive() and started.send(url)


# -- the window process ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WindowOutcome:
    backend: str | None  # the backend the window opened with; None: it could not open
    status: int = 0
    reason: str = ""  # why it could not


class StartedWindow:
    """A window's child process, started before its page is known: it shows the loading page
    until the first ``send((url, token))``; each later ``send(url)`` shows that page in the same
    window and brings it to the front (any thread; one lock). Closing ends the window."""

    def __init__(self, *, probe: Path | None = None, title: str = TITLE) -> None:
        context = multiprocessing.get_context("spawn")
        self.reports, their_reports = context.Pipe(duplex=False)
        their_commands, self._commands = context.Pipe(duplex=False)
        self.child: Any = context.Process(
            target=window_main,
            args=(None, title, None if probe is None else str(probe), their_commands, "",
                  their_reports),
            name="agentbar-window",
        )  # fmt: skip
        self.child.start()
        their_reports.close()
        their_commands.close()
        self._lock = threading.Lock()
        self._pointed = False

    def point(self, url: str, token: str) -> None:
        """Its first page, and the token it reports with (once: later calls do nothing)."""
        with self._lock:
            if self._pointed:
                return
            self._pointed = True
        self._send((url, token))

    def send(self, url: str) -> bool:
        """Show ``url`` in the window, in front (after ``point``); False when it no longer
        listens."""
        with self._lock:
            pointed = self._pointed
        return pointed and self._send(url)

    def _send(self, message: str | tuple[str, str]) -> bool:
        with self._lock:
            try:
                self._commands.send(message)
            except (OSError, ValueError):
                return False
            return True

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._commands.close()  # the child sees EOF and closes the window
        self.reports.close()
        self.child.join(timeout)
        if self.child.is_alive():
            self.child.terminate()
            self.child.join(timeout)


def open_window(
    url: str,
    token: str,
    *,
    probe: Path | None = None,
    title: str = TITLE,
    on_open: Callable[[str], None] | None = None,
    started: StartedWindow | None = None,
) -> WindowOutcome:
    """Show the window in a child process (``started`` if one already shows the loading page)
    and wait until it is closed; or, when the child finds no backend, why not.
    ``on_open(backend)`` once the window is on its way."""
    started = started or StartedWindow(probe=probe, title=title)
    child = started.child
    started.point(url, token)
    try:
        kind, detail = first_report(started.reports, child)
        if kind != "ok":
            child.join(10)
            return WindowOutcome(None, reason=detail)
        if on_open is not None:
            on_open(detail)
        child.join()
    except KeyboardInterrupt:
        child.terminate()
        child.join(5)
        return WindowOutcome("", 130)
    finally:
        started.close()
    return WindowOutcome(detail, child.exitcode or 0)


def first_report(reports: Channel, child: Any, timeout: float = START_SECONDS) -> tuple[str, str]:
    """What the window's child says first: ``("ok", backend)`` or ``("none", why)``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if reports.poll(0.2):
                report = reports.recv()
                if (
                    isinstance(report, tuple)
                    and len(report) == 2
                    and all(isinstance(part, str) for part in report)
                ):
                    return report[0], report[1]
                return "none", "the window process said something odd"
        except (EOFError, OSError):
            break
        if not child.is_alive() and not reports.poll(0):
            break
    child.join(1)
    return "none", f"the window process ended at start (status {child.exitcode})"
