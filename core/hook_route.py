"""The hook route's withdrawals: a request a hook holds is withdrawn as soon as the engine sees
its session move on without agentbar's answer (the person answered in the terminal, pressed
Escape, or the agent exited), so the notification and the buttons go and the hook exits (engine
thread: called with each state change; the book's calls are quick).

The hook's own departure is the other signal (the server withdraws a request whose hook closed
its connection, ``server/hook_routes.py``); whichever comes first closes the request, and the
other finds it closed already. Nothing here answers anything: it only withdraws.
"""

from __future__ import annotations

from collections.abc import Callable

from .decisions import DecisionBook, PendingRequest, Route
from .model import SessionSnapshot, State, StateChange

MOVED_ON = "the session moved on (answered in the terminal)"
ENDED = "the session ended"


class HookRoute:
    """Follows the engine for the book's HOOK requests."""

    def __init__(self, book: DecisionBook) -> None:
        self.book = book

    def follow(self, subscribe: Callable[[Callable[[StateChange], None]], Callable[[], None]]) -> (
        Callable[[], None]
    ):  # fmt: skip
        """Hear the engine's state changes (``engine.subscribe``); returns the unsubscribe."""
        return subscribe(self.on_change)

    def on_change(self, change: StateChange) -> None:
        snap = change.snapshot
        for request in self.book.for_session(snap.key.session_id):
            if request.route is not Route.HOOK or request.agent != str(snap.key.agent):
                continue
            reason = moved_on(request, change)
            if reason is not None:
                self.book.withdraw(request.request_id, reason)


def moved_on(request: PendingRequest, change: StateChange) -> str | None:
    """Why ``change`` means the person no longer waits on ``request``; None when it does not.

    The session must leave ``input_required`` after the request was opened: out of a wait (the
    engine saw the prompt, then its answer), or with a transcript record newer than the request
    (the tool ran, or its refusal was written). A change the engine publishes late, of what
    happened before the prompt, is neither, and leaves the request open."""
    snap: SessionSnapshot = change.snapshot
    if snap.state.state is State.ENDED:
        return ENDED
    if snap.state.state is State.INPUT_REQUIRED or change.ts < request.opened_at:
        return None
    was_waiting = change.prev is not None and change.prev.state is State.INPUT_REQUIRED
    newer = snap.last_activity is not None and snap.last_activity >= request.opened_at
    return MOVED_ON if was_waiting or newer else None
