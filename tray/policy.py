"""When to notify: one notice per transition into input_required, done or failed, bursts
coalesced into one summary, muted projects, the global pause, and no notice for a session whose
window is in front (a pure state machine over a clock; driven by the tray's worker thread).

- A transition is told at most once: a session's (state, waiting_for, since) is remembered, so
  the same state seen again (a poll, a re-publish) says nothing. After a restart nothing is
  told again because the engine settles its catch-up silently: its subscribers (this policy)
  only ever hear of transitions that happen while it runs.
- Coalescing: the first transition opens a window of ``coalesce_seconds``; everything that
  arrives in it is told together when it closes (one notice, or one summary for several). A
  session that moves on inside the window (answered in its terminal at once) drops out; one that
  moves twice is told once, in its latest state.
- Preferences, mute, pause and the window in front are applied when the window closes, so a
  change to any of them counts from then on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..core.clock import Clock
from ..core.model import SessionKey, State, WaitingFor
from . import notices
from .notices import Button, Notice, Transition
from .pause import NO_PAUSE, Pause
from .preferences import NOTIFIABLE, Preferences

Told = tuple[State, WaitingFor | None, float]
Buttons = Callable[[Transition], tuple[Button, ...]]


def _no_buttons(_: Transition) -> tuple[Button, ...]:
    return ()


class Policy:
    def __init__(
        self,
        clock: Clock,
        prefs: Preferences | None = None,
        *,
        pause: Pause = NO_PAUSE,
        buttons: Buttons = _no_buttons,
    ) -> None:
        self.clock = clock
        self.prefs = prefs or Preferences()
        self.pause = pause
        self.buttons = buttons  # extra buttons for a session's notice (a seam for launched tasks)
        self._told: dict[SessionKey, Told] = {}
        self._pending: dict[SessionKey, Transition] = {}
        self._opened_at: float | None = None  # when the coalescing window opened (monotonic)

    def offer(self, t: Transition) -> None:
        told = (t.state, t.waiting_for, t.since)
        if self._told.get(t.key) == told:
            return  # seen before: a repeat is not a transition
        self._told[t.key] = told
        if t.state not in NOTIFIABLE:
            self._pending.pop(t.key, None)  # it moved on before it was told
            if not self._pending:
                self._opened_at = None
            return
        if not self._pending:
            self._opened_at = self.clock.monotonic()
        self._pending.pop(t.key, None)  # the latest state, in arrival order
        self._pending[t.key] = t

    def deadline(self) -> float | None:
        """When ``due`` has something to say (monotonic), or None."""
        if self._opened_at is None:
            return None
        return self._opened_at + self.prefs.coalesce_seconds

    def due(self, in_front: Callable[[SessionKey], bool] = lambda _: False) -> list[Notice]:
        """The notices to show now: none until the coalescing window closes."""
        deadline = self.deadline()
        if deadline is None or self.clock.monotonic() < deadline:
            return []
        burst = list(self._pending.values())
        self._pending.clear()
        self._opened_at = None
        prefs = self.prefs
        if not prefs.enabled or self.pause.active(self.clock.time()):
            return []
        burst = [
            t
            for t in burst
            if t.state in prefs.notify_on and not prefs.is_muted(t.project) and not in_front(t.key)
        ]
        if not burst:
            return []
        if len(burst) == 1:
            notice = notices.single(burst[0], self.buttons(burst[0]))
        else:
            notice = notices.summary(burst)
        return [dataclasses.replace(notice, sound=prefs.sound)]
