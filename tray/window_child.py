"""The window's child process (``spawn``, its main thread: pywebview's loop): checks its backend
and says which on a pipe, opens the window at once on a light loading page, sized and placed
inside the screen's work area, then shows its page; follows the page (the title, what it shows
reported to the server, pages another ``agentbar window`` asks for) and the parent's commands.

It imports nothing heavy of agentbar's (not the engine, not the server): a window that starts
sooner. ``tray/window.py`` is the parent's side.

pywebview's ``evaluate_js`` wraps the script in ``eval``, which the pages' Content-Security-
Policy (``script-src 'self'``) refuses; the window reads its page with ``run_js`` instead
(WebKit's own evaluation, no ``eval``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..core.launch.client import ApiError, api_call
from ..core.server.codes import DEFAULT_SECONDS, with_code
from . import work_area

HEALTH_TIMEOUT = 3.0
LOADING_SECONDS = 5.0  # the loading page shows within this, or the page loads over it
PROBE_SECONDS = 60.0
TITLE_POLL_SECONDS = 1.0
# A window says what it shows at least this often (windows.STALE_SECONDS); the answer carries
# the page another ``agentbar window`` asked it to show, so this is also how soon it shows it.
REPORT_SECONDS = 1.0


class Channel(Protocol):
    """One end of a multiprocessing pipe (``Connection``; ``PipeConnection`` on Windows)."""

    def send(self, obj: Any) -> None: ...

    def recv(self) -> Any: ...

    def poll(self, timeout: float | None = ...) -> bool: ...

    def close(self) -> None: ...


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
