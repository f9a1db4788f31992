"""What a menu entry or a notification button does, as data, and the router that runs it (values
on any thread; the router runs handlers on the tray's worker thread).

An entry never holds a callback: it holds an ``Action`` (a kind and an argument), and the tray
registers one handler per kind. So the menu model stays a comparable value (the menu is rebuilt
only when it changes), notifications and menus share their actions, and a later feature adds a
kind and its handler (launching an agent for a project, approving a task agentbar owns) without
touching the model or the toolkit code.
"""

from __future__ import annotations

import logging
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

from ..core.model import LOCAL_HOST, SessionKey

log = logging.getLogger(__name__)

# The kinds the tray itself handles. Others are registered by whoever adds them.
OPEN = "open"  # arg: the page to open in the window ("/" the board, "/session/<agent>/<id>")
PAUSE = "pause"  # arg: one of pause.CHOICES ("hour", "tomorrow", "off") or "resume"
AUTOSTART = "autostart"  # arg: "enable" or "disable"
QUIT = "quit"  # arg: what becomes of launched agents still running: KEEP_TASKS or STOP_TASKS
KEEP_TASKS = "keep"  # they go on without agentbar (the next agentbar takes them back)
STOP_TASKS = "stop"


@dataclass(frozen=True, slots=True)
class Action:
    kind: str
    arg: str = ""
    text: str = ""  # what the person typed (a notification's inline reply), else ""


BOARD = Action(OPEN, "/")


def open_session(key: SessionKey) -> Action:
    """Open ``key``'s replay (it opens at what needs the user, else at its end)."""
    return Action(OPEN, session_path(key))


def session_path(key: SessionKey) -> str:
    agent = urllib.parse.quote(str(key.agent), safe="")
    path = f"/session/{agent}/{urllib.parse.quote(key.session_id, safe='')}"
    # A remote host's session: the page asks the API with the same ``?host=``.
    return path if key.host == LOCAL_HOST else f"{path}?host={urllib.parse.quote(key.host)}"


Handler = Callable[[Action], None]


class ActionRouter:
    """One handler per kind; an unknown kind or a failing handler is logged, never raised (a
    click must not take the tray down)."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()

    def register(self, kind: str, handler: Handler) -> None:
        with self._lock:
            if kind in self._handlers:
                raise ValueError(f"a handler for {kind!r} is registered already")
            self._handlers[kind] = handler

    def handles(self, kind: str) -> bool:
        with self._lock:
            return kind in self._handlers

    def run(self, action: Action) -> bool:
        """Run ``action``'s handler; False when there is none or it failed."""
        with self._lock:
            handler = self._handlers.get(action.kind)
        if handler is None:
            log.warning("no handler for the action %r", action)
            return False
        try:
            handler(action)
        except Exception:
            log.exception("the action %r failed", action)
            return False
        return True
