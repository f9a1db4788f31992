"""The lifetime of the background ``agentbar serve`` that ``agentbar launch`` started by
itself: it stays while anything uses it and ends by itself a while after the last (serve's
main thread; ``Lifetime`` is a pure state machine fed the clock and what uses it).

What uses it: a launched agent still running, a window or browser page (an events WebSocket),
an ``agentbar watch`` (``presence.py``), a request in the decision book, and a client that has
just made a request (``agentbar launch`` between finding the serve and launching through it).
When any of them cannot be told, it counts as used: a serve never ends while anything may
still need it. A ``serve`` a person started, the tray and autostart have no such lifetime.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import presence

if TYPE_CHECKING:
    from ..app import Agentbar

log = logging.getLogger(__name__)
# A request this recent counts as a use: ``agentbar launch`` asks /api/health, then launches; a
# serve must not end between the two.
RECENT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Uses:
    tasks: int = 0  # launched agents still running
    pages: int = 0  # windows and browser pages (events WebSockets)
    watches: int = 0  # ``agentbar watch`` processes
    decisions: int = 0  # requests waiting on the person
    talking: int = 0  # a client spoke to it in the last ``RECENT_SECONDS`` (a launch on its way)

    def any(self) -> bool:
        return bool(self.tasks or self.pages or self.watches or self.decisions or self.talking)

    def text(self) -> str:
        parts = [
            f"{n} {what}"
            for n, what in (
                (self.tasks, "launched agent(s)"),
                (self.pages, "window(s) or page(s)"),
                (self.watches, "watch(es)"),
                (self.decisions, "pending decision(s)"),
                (self.talking, "client that just spoke to it"),
            )
            if n
        ]
        return ", ".join(parts) or "nothing"


class Lifetime:
    """Ends ``idle_seconds`` after the last use. ``step`` is called every half second or so
    with what uses the serve now (None: it cannot be told, so it counts as used)."""

    def __init__(self, idle_seconds: float, now: float) -> None:
        self.idle_seconds = idle_seconds
        self.idle_since: float | None = now  # a serve with nothing yet is idle from its start
        self.last: Uses | None = None

    def step(self, now: float, uses: Uses | None) -> bool:
        """True when the serve should end now."""
        if uses is None or uses.any():
            if self.idle_since is not None and uses is not None:
                log.info("background agentbar in use: %s", uses.text())
            self.idle_since = None
            self.last = uses if uses is not None else self.last
            return False
        if self.idle_since is None:
            self.idle_since = now
            what = "a launched agent, window, watch or decision comes"
            log.info("background agentbar: nothing uses it; it ends in %g s unless %s",
                     self.idle_seconds, what)  # fmt: skip
        return now - self.idle_since >= self.idle_seconds

    def reason(self, now: float) -> str:
        """Why it ends, for its log."""
        idle = 0.0 if self.idle_since is None else now - self.idle_since
        before = f" (the last: {self.last.text()})" if self.last is not None else ""
        return (f"nothing has used this background agentbar for {idle:.0f} s: no launched "
                f"agent, window or page, watch or pending decision{before}; it ends "
                "(`agentbar launch` starts it again)")  # fmt: skip


def uses_of(app: Agentbar) -> Uses | None:
    """What uses ``app`` now; None when something cannot be told."""
    try:
        server = app.server
        watches = presence.count(app.settings.data_dir)
        if watches is None or server is None:
            return None
        return Uses(
            tasks=0 if app.tasks is None else len(app.tasks.running()),
            pages=len(server.context.clients),
            watches=watches,
            decisions=len(app.decisions.pending()),
            talking=int(time.monotonic() - server.guard.last_request < RECENT_SECONDS),
        )
    except Exception:  # unsure: stay
        log.exception("cannot tell what uses the background agentbar")
        return None
