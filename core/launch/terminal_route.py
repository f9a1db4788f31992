"""The decision book's TERMINAL route: an approval prompt or a question up on a launched task's
screen is a request in the book for as long as it is up, and an answer given in the book is
typed into that task's PTY (a task's reader thread reports its screen; the thread that answers
in the book hands the answer to a delivery thread of its own, since typing takes a second or
two).

One request per dialog: the same dialog redrawn, or its highlight moved, stays the same request;
another dialog, or the same one after it left the screen, is a new one. A request is withdrawn
when its dialog leaves the screen without an answer from the book (the person answered in the
terminal, the task exited, it was kept by a keeper). The keys themselves are the task
manager's (``deliver``): it says whether the dialog cleared, and offers it again when not.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..decisions import (
    BookChange,
    Decision,
    DecisionBook,
    PendingRequest,
    Question,
    RequestKind,
    Route,
    new_request_id,
)
from ..model import Agent
from .prompts import Prompt, PromptKind, describe

log = logging.getLogger(__name__)

LEFT_SCREEN = "the prompt left the task's screen (answered in its terminal)"
TASK_ENDED = "the task is no longer running here"

# Types the answer into the task; returns the dialog still up after it (None: it cleared).
Deliver = Callable[[str, Prompt, Decision], Prompt | None]


@dataclass(frozen=True, slots=True)
class Shown:
    """What one task shows: which task, whose, bound to which session (None: not yet)."""

    task_id: str
    agent: Agent
    session_id: str | None


@dataclass(frozen=True, slots=True)
class _Up:
    shown: Shown
    prompt: Prompt
    request: PendingRequest


def same_dialog(one: Prompt, other: Prompt) -> bool:
    """The same dialog, though redrawn or with its highlight moved."""
    if not same_choices(one, other):
        return False
    return one.kind is PromptKind.QUESTION or one.context == other.context


def same_choices(one: Prompt, other: Prompt) -> bool:
    """The same question with the same choices, whatever is drawn above it (a screen resized
    redraws the lines above a dialog: rewrapped, or cut at the top)."""
    if one.kind is not other.kind or one.question != other.question:
        return False
    if one.kind is PromptKind.QUESTION:
        return True  # its rows change as an answer is typed into its "type your own" option
    return _plain(one.rows) == _plain(other.rows)


def _plain(rows: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(row.strip().lstrip("│┃|>❯›▶*● ").rstrip("│┃| ") for row in rows)


def request_for(shown: Shown, prompt: Prompt) -> PendingRequest:
    """The book's request for a dialog on a task's screen."""
    question = prompt.kind is PromptKind.QUESTION
    tool, summary = ("question", prompt.question) if question else describe(prompt)
    return PendingRequest(
        request_id=new_request_id(),
        agent=str(shown.agent),
        session_id=shown.session_id or "",
        kind=RequestKind.QUESTION if question else RequestKind.APPROVAL,
        route=Route.TERMINAL,
        tool=tool,
        summary=summary,
        opened_at=time.time(),
        questions=(Question(text=prompt.question, options=prompt.options),) if question else (),
        task_id=shown.task_id,
    )


class TerminalRoute:
    def __init__(self, book: DecisionBook, deliver: Deliver) -> None:
        self.book = book
        self._deliver = deliver
        self._lock = threading.Lock()
        self._up: dict[str, _Up] = {}  # by task id
        self._answering: dict[str, _Up] = {}  # by task id: its answer is being typed
        self._unsubscribe = book.subscribe(self._heard)

    def close(self) -> None:
        """Stop hearing the book; withdraw every request still up."""
        self._unsubscribe()
        with self._lock:
            up, self._up = list(self._up.values()), {}
        for entry in up:
            self.book.withdraw(entry.request.request_id, TASK_ENDED)

    def shown(self, shown: Shown, prompt: Prompt | None, *, ended: bool = False) -> None:
        """The task's screen shows ``prompt`` now (None: no dialog; ``ended``: the task is no
        longer running here)."""
        with self._lock:
            typing = self._answering.get(shown.task_id)
            if typing is not None and prompt is not None and same_dialog(typing.prompt, prompt):
                return  # the answer's own keys move its highlight: not a new dialog
            current = self._up.get(shown.task_id)
            if current is not None and prompt is not None and same_dialog(current.prompt, prompt):
                # The same dialog (redrawn; or the task bound meanwhile: the request keeps the
                # id a person may be answering, without the session id, which its task id
                # stands for).
                return
            reason = TASK_ENDED if ended else LEFT_SCREEN
            fresh = None if prompt is None else _Up(shown, prompt, request_for(shown, prompt))
            if fresh is None:
                self._up.pop(shown.task_id, None)
            else:
                self._up[shown.task_id] = fresh
        if current is not None:
            self.book.withdraw(current.request.request_id, reason)
        if fresh is not None:
            self.book.open(fresh.request)

    def take(self, task_id: str) -> PendingRequest | None:
        """The task's open request, taken out of the route's hands: the caller types the answer
        itself (the tasks API's approve and deny), closes the request in the book, and calls
        ``answered`` once the keys are in."""
        with self._lock:
            entry = self._up.pop(task_id, None)
            if entry is not None:
                self._answering[task_id] = entry
        return None if entry is None else entry.request

    def answered(self, task_id: str, still_up: Prompt | None) -> None:
        """The answer's keys are in; ``still_up``: the dialog they did not clear, offered again
        as a new request."""
        with self._lock:
            entry = self._answering.pop(task_id, None)
        if entry is not None and still_up is not None:
            log.warning("task %s: the answer did not clear its dialog: asking again", task_id)
            self.shown(entry.shown, still_up)

    def answering(self, task_id: str) -> bool:
        """An answer to the task's dialog is being typed (from the book or its own API)."""
        with self._lock:
            return task_id in self._answering

    def request_of(self, task_id: str) -> PendingRequest | None:
        with self._lock:
            entry = self._up.get(task_id)
        return None if entry is None else entry.request

    def _heard(self, change: BookChange) -> None:
        """The book changed (on the thread that changed it): an answer to one of ours is
        typed into its task, on a thread of its own."""
        decision = change.decision
        if change.opened or decision is None or change.request.route is not Route.TERMINAL:
            return
        with self._lock:
            task_id = change.request.task_id or ""
            entry = self._up.get(task_id)
            if entry is None or entry.request.request_id != decision.request_id:
                return
            del self._up[task_id]
            self._answering[task_id] = entry
        threading.Thread(
            target=self._type,
            args=(task_id, entry.prompt, decision),
            name=f"agentbar-answer-{task_id}",
            daemon=True,
        ).start()

    def _type(self, task_id: str, prompt: Prompt, decision: Decision) -> None:
        still_up: Prompt | None = None
        try:
            still_up = self._deliver(task_id, prompt, decision)
        except Exception:
            log.exception("task %s: the answer %s was not typed", task_id, decision.request_id)
        finally:
            self.answered(task_id, still_up)
