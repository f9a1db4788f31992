"""Answers given in the tray (a notification's button or inline reply, a "Needs you" entry) into
the decision book: the ``ANSWER`` action's handler (runs on the tray's worker thread; the book's
``decide`` is quick, its holders deliver on their own).

The action names the request's own id, so a click can only ever answer that request. One that is
no longer waiting (answered in the terminal first, withdrawn) is told in a short notice, never
an error: the person's click came a moment late, nothing was sent. A launched task's answer that
its terminal cannot take (the screen moved on) is told the same way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..core.decisions import (
    BookChange,
    Decision,
    DecisionBook,
    DecisionError,
    PendingRequest,
    StaleRequest,
    Verdict,
)
from ..core.errors import Fault, FaultKind
from ..core.model import Agent
from .actions import Action, ActionRouter
from .answer_entries import ANSWER, ANSWER_MENU, parse_answer
from .presenter import AgentNames, agent_name
from .text import shorten

log = logging.getLogger(__name__)

ORIGIN_NOTIFICATION = "notification"
ORIGIN_MENU = "menu"
REMEMBERED = 64  # closed requests kept to word a late click's notice


class TrayAnswers:
    """The handler of ``ANSWER`` actions over one decision book."""

    def __init__(
        self,
        book: DecisionBook,
        tell: Callable[[Fault], None],
        names: AgentNames | None = None,
    ) -> None:
        """``tell`` shows the person a short notice (the worker's ``report``, not lasting);
        ``names``: what a person calls each agent."""
        self.book = book
        self._tell = tell
        self.names: AgentNames = dict(names or {})
        self._seen: dict[str, PendingRequest] = {}  # recent requests, for a late click's words
        self._lock = threading.Lock()  # the book's listener runs on whichever thread changed it
        self._unsubscribe = book.subscribe(self._remember)

    def register(self, router: ActionRouter) -> None:
        router.register(ANSWER, lambda a: self.answer(a, ORIGIN_NOTIFICATION))
        router.register(ANSWER_MENU, lambda a: self.answer(a, ORIGIN_MENU))

    def close(self) -> None:
        self._unsubscribe()

    def _remember(self, change: BookChange) -> None:
        """The book's subscriber (any thread): keep what a request was about."""
        with self._lock:
            self._seen[change.request.request_id] = change.request
            while len(self._seen) > REMEMBERED:
                del self._seen[next(iter(self._seen))]

    def answer(self, action: Action, origin: str) -> None:
        """Answer the request the action names; ``origin``: where it was given."""
        try:
            answer = parse_answer(action.arg)
        except ValueError:
            log.error("not an answer: %r", action)
            return
        with self._lock:
            seen = self._seen.get(answer.request_id)
        request = self.book.get(answer.request_id) or seen
        replies: tuple[str, ...] = ()
        if answer.verdict is Verdict.REPLY:
            replies = self._replies(request, answer.option, action.text)
            if not replies:
                log.warning("an empty reply to %s: nothing sent", answer.request_id)
                return
        decision = Decision(answer.request_id, answer.verdict, origin, replies=replies)
        try:
            self.book.decide(decision)
        except StaleRequest:
            self._tell(late_answer(request, self.names))
        except DecisionError as exc:
            log.warning("answer to %s refused: %s", answer.request_id, exc)
            self._tell(Fault(FaultKind.ACTION, exc.title, f"Nothing was sent: {exc.message}."))

    @staticmethod
    def _replies(request: PendingRequest | None, option: int | None, text: str) -> tuple[str, ...]:
        if option is None:
            return (text.strip(),) if text.strip() else ()
        if request is None or not request.questions:
            return ()
        options = request.questions[0].options
        return (options[option],) if option < len(options) else ()


def late_answer(request: PendingRequest | None, names: AgentNames) -> Fault:
    """A click that came after the request closed: what to say (briefly)."""
    what = "That request"
    if request is not None:
        asked = request.summary or request.tool
        what = f"{agent_name(names, Agent(request.agent))}'s {shorten(asked, 60)}"
    return Fault(
        FaultKind.ACTION,
        "Already answered",
        f"{what} is no longer waiting (answered in the terminal, or withdrawn): nothing was sent.",
    )
