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

pywebview's ``evaluate_js`` wraps the script in ``eval``, which the pages' Content-Security-
Policy (``script-src 'self'``) refuses; the window reads its page with ``run_js`` instead
(WebKit's own evaluation, no ``eval``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import logging
import multiprocessing
import os
import secrets
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from ..core.app import Agentbar
from ..core.config import Settings
from ..core.launch.client import ApiError, Client, NoServer, api_call
from ..core.server.codes import DEFAULT_SECONDS, MAX_SECONDS, with_code
from . import work_area
from .browser import by_hand, open_in_browser

log = logging.getLogger(__name__)

TITLE = "agentbar"
OPENING = "opening agentbar…"
LOADING_SECONDS = 5.0  # the loading page shows within this, or the page loads over it
HEALTH_TIMEOUT = 3.0
PROBE_SECONDS = 60.0
TITLE_POLL_SECONDS = 1.0
# A window says what it shows at least this often (windows.STALE_SECONDS); the answer carries
# the page another ``agentbar window`` asked it to show, so this is also how soon it shows it.
REPORT_SECONDS = 1.0
START_SECONDS = 60.0  # the child says which backend it found (or none) within this


class Channel(Protocol):
    """One end of a multiprocessing pipe (``Connection``; ``PipeConnection`` on Windows)."""

    def send(self, obj: Any) -> None: ...

    def recv(self) -> Any: ...

    def poll(self, timeout: float | None = ...) -> bool: ...

    def close(self) -> None: ...


# (path, seconds) -> an address that opens the page once, within that many seconds
UrlFor = Callable[[str, float], str]

# What the window shows before its page is ready: light (dark where the system is), no script.
LOADING_BACKGROUND = "#F6F7F9"
LOADING_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>agentbar</title>
<style>
:root { color-scheme: light dark; }
html, body { height: 100%; margin: 0; }
body { display: flex; align-items: center; justify-content: center; background: #f6f7f9;
  color: #4b5563; font: 15px system-ui, -apple-system, "Segoe UI", sans-serif; }
.mark { width: 18px; height: 18px; border-radius: 50%; border: 3px solid #586880;
  margin-right: 12px; animation: breathe 1.2s ease-in-out infinite alternate; }
@keyframes breathe { from { opacity: .35; } to { opacity: 1; } }
@media (prefers-color-scheme: dark) { body { background: #15171a; color: #c9ced6; } }
</style></head>
<body data-view="loading"><div class="mark"></div><div>Opening agentbar…</div></body></html>
"""

# What the window tells its server every second: its page and whether it is in front.
SHOWN_JS = """JSON.stringify({
  title: document.title,
  path: location.pathname,
  focused: document.hasFocus() && document.visibilityState === 'visible'
})"""

# What the window reads back from its page (run by WebKit itself: no eval under the CSP).
PAGE_STATE_JS = """JSON.stringify({
  title: document.title,
  url: location.href,
  view: document.body ? (document.body.dataset.view || null) : null,
  ready: (document.getElementById('app') || {dataset: {}}).dataset.ready || null,
  cards: document.querySelectorAll('.card').length,
  items: document.querySelectorAll('.item').length,
  live: (document.getElementById('live-status') || {dataset: {}}).dataset.status || null
})"""


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


class NoBackend(Exception):
    """pywebview cannot show a window here (the message says why, in a few words)."""


def _gtk() -> None:
    gi: Any = importlib.import_module("gi")
    for version in ("4.1", "4.0"):  # WebKitGTK for GTK 3, as pywebview asks for it
        try:
            gi.require_version("WebKit2", version)
            break
        except ValueError:
            continue
    else:
        raise NoBackend("no WebKit2 4.1 or 4.0")
    gi.require_version("Gtk", "3.0")
    importlib.import_module("gi.repository.Gtk")
    importlib.import_module("gi.repository.WebKit2")


def _qt() -> None:
    importlib.import_module("qtpy")
    importlib.import_module("qtpy.QtWebEngineWidgets")


def _cocoa() -> None:
    importlib.import_module("AppKit")
    importlib.import_module("WebKit")


def _edge() -> None:
    importlib.import_module("clr")  # pythonnet: pywebview's way to WebView2


BACKENDS: dict[str, list[tuple[str, str, Callable[[], None]]]] = {
    "linux": [("gtk", "GTK", _gtk), ("qt", "Qt", _qt)],
    "darwin": [("cocoa", "Cocoa", _cocoa)],
    "win32": [("edgechromium", "EdgeChromium", _edge)],
}


def webview_backend(
    env: dict[str, str] | None = None, platform: str | None = None
) -> tuple[str, str]:
    """pywebview's name for a backend that imports here, and the name to show; ``NoBackend``
    when pywebview or every backend fails to import (``$PYWEBVIEW_GUI`` narrows the choice)."""
    env = dict(os.environ) if env is None else env
    platform = platform or sys.platform
    try:
        importlib.import_module("webview")
    except Exception as exc:  # ImportError, or a broken install failing its own way
        raise NoBackend(f"pywebview cannot be imported: {exc}") from None
    key = "linux" if platform.startswith("linux") or "bsd" in platform else platform
    chosen = env.get("PYWEBVIEW_GUI")
    problems = []
    for gui, name, check in BACKENDS.get(key, []):
        if chosen and chosen != gui:
            continue
        try:
            check()
        except Exception as exc:  # ImportError, ValueError (gi's versions), a missing library
            problems.append(f"{name}: {exc}")
            continue
        return gui, name
    raise NoBackend(f"no pywebview backend ({'; '.join(problems) or 'none for ' + platform})")


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


def window_main(  # noqa: PLR0917 - multiprocessing passes them in order
    url: str | None,
    title: str,
    probe: str | None,
    commands: Channel | None = None,
    token: str = "",
    reports: Channel | None = None,
) -> None:
    """The child's main thread: pywebview's loop until the window closes. The window opens at
    once on the loading page, sized and placed inside the screen's work area, then shows
    ``url`` (None: the first address ``commands`` brings). ``commands`` (from the tray, or the
    ``agentbar window`` that started it) carries addresses to show in this window instead of
    opening another; ``reports`` hears which backend it uses, or why there is none, before
    anything shows."""
    try:
        chosen, name = webview_backend()
    except NoBackend as exc:
        _report(reports, ("none", str(exc)))
        return
    import webview  # noqa: PLC0415  (the child alone needs the GUI toolkit)

    _report(reports, ("ok", name))
    gui: Any = chosen  # one of pywebview's literal names
    # The export buttons download (a save dialog); without this pywebview drops downloads.
    webview.settings["ALLOW_DOWNLOADS"] = True
    window = webview.create_window(
        title, html=LOADING_HTML, text_select=True, background_color=LOADING_BACKGROUND,
        **placement_arguments(placement(webview)),
    )  # fmt: skip
    webview.start(_on_start, (window, probe, url, token, commands), gui=gui, private_mode=True)


def placement(webview: Any, env: dict[str, str] | None = None) -> work_area.Area | None:
    """Where the window goes: inside the X server's work area (panels left free), else inside
    pywebview's first screen; None when neither is known (pywebview's defaults then)."""
    env = dict(os.environ) if env is None else env
    area = None
    if env.get("DISPLAY") and (sys.platform.startswith("linux") or "bsd" in sys.platform):
        area = work_area.x11_work_area(env["DISPLAY"])
    if area is None:
        with contextlib.suppress(Exception):  # a backend without screens, or none yet
            screens = list(webview.screens)
            area = work_area.from_screen(screens[0]) if screens else None
    return None if area is None else work_area.fit(area)


def placement_arguments(place: work_area.Area | None) -> dict[str, Any]:
    """``create_window``'s size, position and smallest size for ``place``."""
    if place is None:
        return {"width": work_area.WANTED[0], "height": work_area.WANTED[1],
                "min_size": work_area.SMALLEST}  # fmt: skip
    smallest = (min(work_area.SMALLEST[0], place.width), min(work_area.SMALLEST[1], place.height))
    return {"width": place.width, "height": place.height, "x": place.x, "y": place.y,
            "min_size": smallest}  # fmt: skip


def _report(reports: Channel | None, report: tuple[str, str]) -> None:
    if reports is not None:
        with contextlib.suppress(OSError):
            reports.send(report)
            reports.close()


def _on_start(
    window: Any, probe: str | None, url: str | None, token: str, commands: Channel | None
) -> None:
    """pywebview's start function (a thread of its own, once the loop runs): the loading page
    shows, then the page."""
    window.events.loaded.wait(LOADING_SECONDS)
    if url is None:
        first = _first_page(commands)
        if first is None:  # the parent gave up (an unknown session, a server that failed)
            window.destroy()
            return
        url, token = first
    window.load_url(url)  # clears ``loaded``: the follower and the probe wait for the page
    follower = threading.Thread(
        target=_follow_page, args=(window, url, token), name="agentbar-window-title", daemon=True
    )
    follower.start()
    if commands is not None:
        listener = threading.Thread(
            target=_follow_commands,
            args=(window, commands),
            name="agentbar-window-commands",
            daemon=True,
        )
        listener.start()
    if probe is not None:
        _probe(window, Path(probe))


def _first_page(commands: Channel | None) -> tuple[str, str] | None:
    """The first address the parent sends, with the token to report with; None at EOF."""
    while commands is not None:
        try:
            message = commands.recv()
        except (EOFError, OSError):
            return None
        if isinstance(message, str):
            return message, ""
        if (
            isinstance(message, tuple)
            and len(message) == 2
            and all(isinstance(part, str) for part in message)
        ):
            return message[0], message[1]
    return None


def _follow_commands(window: Any, commands: Channel) -> None:
    """Addresses from the tray: show each in this window and bring it to the front. The
    tray closing its end (it quit) closes the window."""
    while True:
        try:
            url = commands.recv()
        except (EOFError, OSError):
            break
        if not isinstance(url, str):
            continue
        with contextlib.suppress(Exception):
            window.load_url(url)
            window.restore()
    with contextlib.suppress(Exception):
        window.destroy()


def page_state(window: Any) -> dict[str, Any] | None:
    raw = window.run_js(PAGE_STATE_JS)
    if not isinstance(raw, str):
        return None
    try:
        state = json.loads(raw)
    except ValueError:
        return None
    return state if isinstance(state, dict) else None


def _follow_page(window: Any, url: str, token: str) -> None:
    """The window's title follows the page's (it counts the sessions that need you), and the
    server hears which page the window shows and whether it is in front, so the tray does not
    notify about a session the user is looking at."""
    shown_title = None
    report = _Reporter(url, token)
    if not window.events.loaded.wait(PROBE_SECONDS):
        return
    while not window.events.closed.wait(TITLE_POLL_SECONDS):
        with contextlib.suppress(Exception):
            raw = window.run_js(SHOWN_JS)
            state = json.loads(raw) if isinstance(raw, str) else None
            if not isinstance(state, dict) or window.events.closed.is_set():
                continue
            title = state.get("title")
            if isinstance(title, str) and title and title != shown_title:
                window.set_title(title)
                shown_title = title
            path = state.get("path")
            asked = report(path if isinstance(path, str) else None, state.get("focused") is True)
            if asked is not None:
                _show_asked(window, report, asked)
    report(None, False)


def _show_asked(window: Any, report: _Reporter, path: str) -> None:
    """Another ``agentbar window`` asked for ``path``: show it here, in front."""
    url = report.open_url(path)
    if url is None:
        return
    window.load_url(url)
    window.restore()


class _Reporter:
    """Tells the window's server what it shows (``PUT /api/window/<id>``): on a change, and
    every few seconds so the server knows it still does."""

    def __init__(self, url: str, token: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.token = token
        self.window = secrets.token_hex(8)
        self.last: tuple[str | None, bool] | None = None
        self.at = 0.0

    def __call__(self, path: str | None, focused: bool) -> str | None:
        """Report; the page the server asks this window to show instead, if any."""
        now = time.monotonic()
        if (path, focused) == self.last and now - self.at < REPORT_SECONDS:
            return None
        try:
            _, answer = api_call(
                self.origin,
                self.token,
                "PUT",
                f"/api/window/{self.window}",
                {"path": path, "focused": focused},
                timeout=HEALTH_TIMEOUT,
            )
        except (ApiError, OSError, ValueError):
            return None  # an older server, or it stopped: nothing to tell
        self.last, self.at = (path, focused), now
        asked = answer.get("open") if isinstance(answer, dict) else None
        return asked if isinstance(asked, str) and asked.startswith("/") else None

    def open_url(self, path: str) -> str | None:
        """An address that opens ``path`` on this window's server once (a one-time code)."""
        try:
            _, doc = api_call(
                self.origin,
                self.token,
                "POST",
                "/api/codes",
                {"seconds": DEFAULT_SECONDS},
                timeout=HEALTH_TIMEOUT,
            )
        except (ApiError, OSError, ValueError):
            return None
        code = doc.get("code") if isinstance(doc, dict) else None
        return with_code(self.origin, path, code) if isinstance(code, str) else None


def _probe(window: Any, path: Path) -> None:
    """Wait for the page to be ready, write what it shows, close the window."""
    result: dict[str, Any] = {"loaded": window.events.loaded.wait(PROBE_SECONDS)}
    deadline = time.monotonic() + PROBE_SECONDS
    state = None
    while result["loaded"] and time.monotonic() < deadline:
        state = page_state(window)
        if state and (state.get("ready") == "true" or state.get("cards")):
            break
        time.sleep(0.1)
    result["page"] = state
    path.write_text(json.dumps(result), encoding="utf-8")
    window.destroy()
