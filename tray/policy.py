"""When to notify: one notice per transition into input_required, done or failed, the first
told at once and the ones that follow it coalesced into one summary, muted projects, the global
pause, and no notice for a session whose window is in front (a pure state machine over a clock;
driven by the tray's worker thread).

- A transition is told at most once: a session's (state, waiting_for, since) is remembered, so
  the same state seen again (a poll, a re-publish) says nothing. After a restart nothing is
  told again because the engine settles its catch-up silently: its subscribers (this policy)
  only ever hear of transitions that happen while it runs.
- Coalescing, on the trailing side only: the first transition after a quiet spell is told at
  once (``due`` right away) and opens a window of ``coalesce_seconds``. The transitions that
  come while it is open are held, and told together when it closes (one notice, or one summary
  for several); a summary told opens the next window, so notices come at most one per window
  after the first. A window whose notice was silenced (muted, paused, in front) closes at
  once: only what is shown holds back what follows. A held session that moves on (answered in
  its terminal at once) drops out; one that moves twice is told once, in its latest state.
  ``coalesce_seconds = 0``: every transition at once.
- A request the decision book holds is told once, by a notice of its own that answers it
  (``Transition.request``), coalesced like the rest; it is held apart from its session's other
  news (two requests of one session are two notices), it replaces its session's plain "needs
  your approval" while that is untold, and while it is open that plain news is not told at all
  (the request's notice says it, with the buttons). A request that closes before it is told
  drops out (``close_request``).
- Preferences, mute, pause and the window in front are applied when a notice is told (at once
  for the first, when the window closes for the held ones), so a change to any of them counts
  from then on.
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
Slot = SessionKey | str  # a session's news by its key; a request's by its id
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
        self._told: dict[Slot, Told] = {}
        self._first: Transition | None = None  # the transition that ended a quiet spell, untold
        self._held: dict[Slot, Transition] = {}  # the ones that came inside the window
        self._asking: dict[SessionKey, set[str]] = {}  # the open requests of each session
        self._window_ends: float | None = None  # when the coalescing window closes (monotonic)

    def offer(self, t: Transition) -> None:
        slot = _slot(t)
        told = (t.state, t.waiting_for, t.since)
        if self._told.get(slot) == told:
            return  # seen before: a repeat is not a transition
        self._told[slot] = told
        if t.request is not None:
            self._asking.setdefault(t.key, set()).add(t.request.request_id)
            if self._first is not None and _slot(self._first) == t.key:
                self._first = t  # its session's plain news, untold: the request's says it
                return
            self._held.pop(t.key, None)
        elif t.state not in NOTIFIABLE:  # it moved on before it was told
            self._drop(t.key)
            return
        elif t.state is State.INPUT_REQUIRED and self._asking.get(t.key):
            return  # the open request's own notice says so, with the buttons
        if self._first is not None and _slot(self._first) == slot:
            self._first = t  # not told yet: told once, in its latest state
            return
        now = self.clock.monotonic()
        window_open = self._window_ends is not None and now < self._window_ends
        if self._first is None and not self._held and not window_open:
            self._first = t  # a quiet spell ends: told at once
            self._window_ends = now + self.prefs.coalesce_seconds
            return
        self._held.pop(slot, None)  # the latest state, in arrival order
        self._held[slot] = t

    def close_request(self, key: SessionKey, request_id: str) -> None:
        """The request ``request_id`` of ``key`` closed: untold, it is never told now."""
        open_ones = self._asking.get(key)
        if open_ones is not None:
            open_ones.discard(request_id)
            if not open_ones:
                del self._asking[key]
        if self._first is not None and _slot(self._first) == request_id:
            self._first = None
        self._held.pop(request_id, None)
        self._told.pop(request_id, None)

    def _drop(self, key: SessionKey) -> None:
        """Forget the session's own untold news (not its requests')."""
        if self._first is not None and _slot(self._first) == key:
            self._first = None
        self._held.pop(key, None)

    def deadline(self) -> float | None:
        """When ``due`` has something to say (monotonic), or None."""
        if self._first is not None:
            return self.clock.monotonic()
        if self._held:
            return self._window_ends
        return None

    def due(self, in_front: Callable[[SessionKey], bool] = lambda _: False) -> list[Notice]:
        """The notices to show now: the first transition at once, the held ones once the
        window closes."""
        found: list[Notice] = []
        if self._first is not None:
            first, self._first = self._first, None
            found = self._tell([first], in_front)
            if not found and not self._held:
                self._window_ends = None  # nothing was said: the next change is first again
        now = self.clock.monotonic()
        if self._window_ends is not None and now >= self._window_ends:
            held = list(self._held.values())
            self._held.clear()
            told = self._tell(held, in_front)
            found += told
            # A summary told opens the next window; an empty one lets the next change be first.
            self._window_ends = now + self.prefs.coalesce_seconds if told else None
        return found

    def _tell(
        self, burst: list[Transition], in_front: Callable[[SessionKey], bool]
    ) -> list[Notice]:
        """``burst`` as one notice (one summary for several), less what the preferences, the
        pause and the windows in front silence now."""
        prefs = self.prefs
        if not burst or not prefs.enabled or self.pause.active(self.clock.time()):
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


def _slot(t: Transition) -> Slot:
    return t.request.request_id if t.request is not None else t.key
