"""The tray's first start: once its first reading is done, one notice saying what agentbar found
and what to do next, and a menu line that says it again until dismissed or the tray starts again
(``first_start`` on the main thread before the engine opens; the rest on the tray's worker
thread, except the short thread that waits for the first reading).

First means no index yet (nothing of agentbar's has read the history before) and no
``<data dir>/welcomed`` (written, private, once the notice is sent: it is told once).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.config import Settings
from ..core.model import SessionSnapshot, State
from ..core.privacy import write_private
from . import actions
from .actions import Action, ActionRouter
from .notices import Notice
from .view import Entry

KIND = "welcome"  # arg: "tell" (the first reading is done) or "dismiss"
MARKER = "welcomed"
HOOKS = "agentbar hooks install"


def first_start(settings: Settings) -> bool:
    """Whether this is agentbar's first start here (call before the engine makes its index)."""
    return not settings.index_path.exists() and not (settings.data_dir / MARKER).exists()


@dataclass(frozen=True, slots=True)
class Found:
    sessions: int
    need_you: int

    @classmethod
    def of(cls, snapshots: Sequence[SessionSnapshot]) -> Found:
        waiting = sum(1 for s in snapshots if s.state.state is State.INPUT_REQUIRED)
        return cls(len(snapshots), waiting)

    @property
    def line(self) -> str:
        """What was found in words, like "22 sessions, 0 need you"."""
        noun = "session" if self.sessions == 1 else "sessions"
        verb = "needs" if self.need_you == 1 else "need"
        return f"{self.sessions} {noun}, {self.need_you} {verb} you"


def notice(found: Found, autostart: bool | None) -> Notice:
    """The one notice: what was found, and the next steps (start at login only where it is
    off and this platform has it)."""
    steps = [f"run '{HOOKS}' so approvals and questions are told exactly"]
    if autostart is False:
        steps.append("choose Start at login in agentbar's menu")
    return Notice(
        title=f"agentbar found {found.line}",
        body="Next: " + "; ".join(steps) + ".",
        click=actions.BOARD,
    )


def entries(found: Found, autostart: bool | None) -> tuple[Entry, ...]:
    """The menu line: what was found, with the next steps and Dismiss under it."""
    steps = [Entry(f"Next: {HOOKS} (exact approvals)")]
    if autostart is False:
        steps.append(Entry("Next: start agentbar at login", Action(actions.AUTOSTART, "enable")))
    steps.append(Entry("Dismiss", Action(KIND, "dismiss")))
    return (Entry(f"Welcome: {found.line}", submenu=tuple(steps)),)


class Welcome:
    """The first start's notice and menu line (``entries`` is the worker's extra menu part)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        first: bool,
        sessions: Callable[[], Sequence[SessionSnapshot]],
        send: Callable[[Notice], None],
        autostart: Callable[[], bool | None],
    ) -> None:
        self.marker = data_dir / MARKER
        self.first = first
        self.sessions = sessions
        self.send = send
        self.autostart = autostart
        self.found: Found | None = None  # set once told
        self.dismissed = False

    def register(self, router: ActionRouter) -> None:
        router.register(KIND, self._act)

    def start(self, ready: threading.Event, post: Callable[[Action], None]) -> None:
        """Tell once ``ready`` (the engine's first reading) is set: a daemon thread waits."""
        if not self.first:
            return

        def wait() -> None:
            ready.wait()
            post(Action(KIND, "tell"))

        threading.Thread(target=wait, name="agentbar-welcome", daemon=True).start()

    def entries(self) -> tuple[Entry, ...]:
        if self.found is None or self.dismissed:
            return ()
        return entries(self.found, self.autostart())

    def _act(self, action: Action) -> None:
        if action.arg == "dismiss":
            self.dismissed = True
        elif action.arg == "tell" and self.first and self.found is None:
            self.found = Found.of(self.sessions())
            self.send(notice(self.found, self.autostart()))
            write_private(self.marker, b"")
