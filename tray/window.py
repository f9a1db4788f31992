"""``agentbar window [SESSION_ID]``: the session window (board, replay, search), pywebview in a
child process (this module's commands run on the main thread; the window owns the main thread
of its own child, started with ``spawn``).

If an agentbar server runs (``<data dir>/server.json`` names a live process that answers), the
window opens on it; otherwise this process runs the engine, the server and a task manager
itself, opens the window, and stops engine and server when the window closes (agents launched
from the window run on). Closing the window never stops a server that
runs elsewhere (the tray, ``agentbar serve``). The window opens the server's address with its
token; the server moves the token into a cookie at once, so the page never holds it.

pywebview's ``evaluate_js`` wraps the script in ``eval``, which the pages' Content-Security-
Policy (``script-src 'self'``) refuses; the window reads its page with ``run_js`` instead
(WebKit's own evaluation, no ``eval``).
"""

from __future__ import annotations

import argparse
import contextlib
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
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TextIO

from agentbar.core.config import Settings
from agentbar.core.launch.client import ApiError, Client, NoServer, api_call
from agentbar.core.launch.manager import TaskManager
from agentbar.core.server.runner import announced_server
from agentbar.core.service import Service

log = logging.getLogger(__name__)

TITLE = "agentbar"
SIZE = (1200, 860)
MIN_SIZE = (640, 420)
HEALTH_TIMEOUT = 3.0
PROBE_SECONDS = 60.0
TITLE_POLL_SECONDS = 1.0
REPORT_SECONDS = 5.0  # a window says what it shows at least this often (windows.STALE_SECONDS)

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
        "closes.",
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
    server = running_server(settings)
    if server is not None:
        try:
            path = target_path(lambda: server_sessions(server), args.session_id)
        except LookupError as exc:
            print(f"agentbar: {exc}", file=err)
            return 1
        return open_window(page_url(server.port, server.token, path), probe=probe)
    return serve_and_open(settings, args.session_id, probe=probe, err=err)


# -- can a window open here --------------------------------------------------------------------


def display_problem(env: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no window can open here (one line), or None."""
    env = dict(os.environ) if env is None else env
    platform = platform or sys.platform
    linux_like = platform.startswith("linux") or "bsd" in platform
    if linux_like and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return (
            "no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "run 'agentbar serve' and open its address in a browser"
        )
    if importlib.util.find_spec("webview") is None:
        return "pywebview is not installed (pip install 'pywebview[gtk]')"
    if (
        platform.startswith("linux")
        and gui_name(env) == "gtk"
        and (importlib.util.find_spec("gi") is None)
    ):
        return "pywebview's GTK backend needs PyGObject (pip install 'PyGObject<3.51')"
    return None


def gui_name(env: dict[str, str] | None = None) -> str | None:
    env = dict(os.environ) if env is None else env
    chosen = env.get("PYWEBVIEW_GUI")
    if chosen:
        return chosen
    return "gtk" if sys.platform.startswith("linux") else None


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


def page_url(port: int, token: str, path: str = "/") -> str:
    return f"http://127.0.0.1:{port}{path}?{urllib.parse.urlencode({'token': token})}"


# -- running one ourselves ---------------------------------------------------------------------


def serve_and_open(
    settings: Settings, wanted: str | None, *, probe: Path | None, err: TextIO
) -> int:
    """No server runs: the engine, the server and a task manager in this process, for as long as
    the window. Agents launched, resumed or forked from the window run on after it closes (a
    keeper holds their terminals; the next agentbar takes them back)."""
    service = Service.open(settings)
    tasks = TaskManager(settings, engine=service.engine)
    listening = False
    try:
        with announced_server(service, settings, tasks=tasks) as server:
            listening = True
            service.start()
            tasks.start()
            if wanted:
                service.engine.ready.wait(120)
            try:
                path = target_path(
                    lambda: [
                        (str(s.key.agent), s.key.session_id) for s in service.engine.sessions()
                    ],
                    wanted,
                )
            except LookupError as exc:
                print(f"agentbar: {exc}", file=err)
                return 1
            return open_window(page_url(server.port, server.token, path), probe=probe)
    except OSError as exc:
        if listening:
            raise  # not the socket
        print(f"agentbar: cannot listen on 127.0.0.1: {exc.strerror or exc}", file=err)
        return 1
    finally:
        tasks.shutdown(keep=True)
        service.close()


# -- the window process ------------------------------------------------------------------------


def open_window(url: str, *, probe: Path | None = None, title: str = TITLE) -> int:
    """Show the window in a child process and wait until it is closed; its exit status."""
    context = multiprocessing.get_context("spawn")
    child = context.Process(
        target=window_main,
        args=(url, title, None if probe is None else str(probe)),
        name="agentbar-window",
    )
    child.start()
    try:
        child.join()
    except KeyboardInterrupt:
        child.terminate()
        child.join(5)
        return 130
    return child.exitcode or 0


def window_main(
    url: str, title: str, probe: str | None, commands: Connection | None = None
) -> None:
    """The child's main thread: pywebview's loop until the window closes. ``commands`` (from
    the tray) carries addresses to show in this window instead of opening another."""
    import webview  # noqa: PLC0415  (the child alone needs the GUI toolkit)

    # The export buttons download (a save dialog); without this pywebview drops downloads.
    webview.settings["ALLOW_DOWNLOADS"] = True
    window = webview.create_window(
        title, url, width=SIZE[0], height=SIZE[1], min_size=MIN_SIZE, text_select=True
    )
    gui: Any = gui_name()  # one of pywebview's names, or None: its own choice
    webview.start(_on_start, (window, probe, url, commands), gui=gui, private_mode=True)


def _on_start(window: Any, probe: str | None, url: str, commands: Connection | None) -> None:
    """pywebview's start function (a thread of its own, once the loop runs)."""
    follower = threading.Thread(
        target=_follow_page, args=(window, url), name="agentbar-window-title", daemon=True
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


def _follow_commands(window: Any, commands: Connection) -> None:
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


def _follow_page(window: Any, url: str) -> None:
    """The window's title follows the page's (it counts the sessions that need you), and the
    server hears which page the window shows and whether it is in front, so the tray does not
    notify about a session the user is looking at."""
    shown_title = None
    report = _Reporter(url)
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
            report(path if isinstance(path, str) else None, state.get("focused") is True)
    report(None, False)


class _Reporter:
    """Tells the window's server what it shows (``PUT /api/window/<id>``): on a change, and
    every few seconds so the server knows it still does."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.token = (urllib.parse.parse_qs(parts.query).get("token") or [""])[0]
        self.window = secrets.token_hex(8)
        self.last: tuple[str | None, bool] | None = None
        self.at = 0.0

    def __call__(self, path: str | None, focused: bool) -> None:
        now = time.monotonic()
        if (path, focused) == self.last and now - self.at < REPORT_SECONDS:
            return
        try:
            api_call(
                self.origin,
                self.token,
                "PUT",
                f"/api/window/{self.window}",
                {"path": path, "focused": focused},
                timeout=HEALTH_TIMEOUT,
            )
        except (ApiError, OSError, ValueError):
            return  # an older server, or it stopped: nothing to tell
        self.last, self.at = (path, focused), now


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
