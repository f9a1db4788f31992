"""The requests waiting on a person's answer and the answers given to them: one book that every
way in (a hook that holds a request, a launched task's screen) and every front end (notification,
menu, window, shell) shares (any thread: one lock inside; callbacks are called outside it).

A request gets an id of agentbar's own when it is opened, and an answer names that id, so an
answer can never land on a different, later request of the same session: an answer to a request
that is no longer open is refused with ``StaleRequest``. A request leaves the book when it is
answered, or withdrawn by its holder (the person answered in the terminal first, the hook gave
up, the agent moved on, the task exited). Nothing is ever answered by default or by a timeout:
the book only carries what a person chose, and each answer is logged (which session, which
request, what, from where).

The holders act on answers: the hook route replies to the waiting hook program, the terminal
route types the agent's keys into its PTY. They hear answers through ``subscribe`` (or block in
``wait``), and withdraw what they can no longer deliver.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from .errors import AgentbarError
from .model import LOCAL_HOST

log = logging.getLogger("agentbar.decisions")


class RequestKind(StrEnum):
    APPROVAL = "approval"  # a tool call to allow or deny
    QUESTION = "question"  # the agent asks; the person replies


class Route(StrEnum):
    HOOK = "hook"  # a hook program holds the request and waits for the answer
    TERMINAL = "terminal"  # up on the screen of a task agentbar launched; answered with keys


class Verdict(StrEnum):
    ALLOW = "allow"
    ALLOW_ALWAYS = "allow_always"  # allow, and add the request's ``always_rule``
    DENY = "deny"
    REPLY = "reply"  # a question's answer: ``Decision.replies``


@dataclass(frozen=True, slots=True)
class Question:
    """One question of a request: its text, a short header, the options offered (may be none:
    free text), and whether several may be chosen."""

    text: str
    header: str = ""
    options: tuple[str, ...] = ()
    multiple: bool = False


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A request waiting on a person. ``summary`` says what would happen (the command, the
    file); ``always_rule`` the exact rule "Always allow" would add, None when it is not offered;
    ``questions`` what a question asks; ``task_id`` the launched task it is up in, if any;
    ``opened_at`` wall-clock seconds."""

    request_id: str
    agent: str
    session_id: str
    kind: RequestKind
    route: Route
    tool: str
    summary: str
    opened_at: float
    always_rule: str | None = None
    questions: tuple[Question, ...] = ()
    task_id: str | None = None
    # The machine the session runs on (``LOCAL_HOST``, or the remote's name whose far side
    # holds the request: the answer travels back through its channel).
    host: str = LOCAL_HOST

    def verdicts(self) -> tuple[Verdict, ...]:
        """The answers this request takes."""
        if self.kind is RequestKind.QUESTION:
            return (Verdict.REPLY, Verdict.DENY)
        if self.always_rule is not None:
            return (Verdict.ALLOW, Verdict.ALLOW_ALWAYS, Verdict.DENY)
        return (Verdict.ALLOW, Verdict.DENY)


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's answer to one request. ``message``: what a denial tells the agent;
    ``replies``: a question's answers, one per question; ``origin``: where it was given
    (notification, menu, window, cli, api)."""

    request_id: str
    verdict: Verdict
    origin: str
    message: str | None = None
    replies: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BookChange:
    """What changed in the book: a request ``opened``, or closed with its ``decision`` (answered)
    or a ``reason`` (withdrawn)."""

    request: PendingRequest
    opened: bool
    decision: Decision | None = None
    reason: str | None = None


class DecisionError(AgentbarError):
    title = "Cannot answer the agent"


class StaleRequest(DecisionError, LookupError):
    """The request named is no longer open (answered, withdrawn, or never was)."""


class WrongAnswer(DecisionError, ValueError):
    """The answer does not fit the request (a reply to an approval, "always" not offered)."""


def new_request_id() -> str:
    return secrets.token_hex(8)


@dataclass
class _Open:
    request: PendingRequest
    closed: threading.Event = field(default_factory=threading.Event)
    decision: Decision | None = None


class DecisionBook:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, _Open] = {}
        self._closed: dict[str, _Open] = {}  # recently closed, for ``wait`` racing a close
        self._listeners: list[Callable[[BookChange], None]] = []

    # -- holders ---------------------------------------------------------------------------

    def open(self, request: PendingRequest) -> None:
        with self._lock:
            if request.request_id in self._open or request.request_id in self._closed:
                raise ValueError(f"request {request.request_id} was opened already")
            self._open[request.request_id] = _Open(request)
        log.info("request %s opened: %s %s %s %s (%s)", request.request_id, request.agent,
                 request.session_id, request.kind, request.tool, request.route)  # fmt: skip
        self._tell(BookChange(request, opened=True))

    def withdraw(self, request_id: str, reason: str) -> bool:
        """Close an open request without an answer; False if it was not open."""
        entry = self._close(request_id, None)
        if entry is None:
            return False
        log.info("request %s withdrawn: %s", request_id, reason)
        self._tell(BookChange(entry.request, opened=False, reason=reason))
        return True

    def wait(self, request_id: str, timeout: float | None = None) -> Decision | None:
        """The answer to the request once it is closed; None if it was withdrawn, is unknown, or
        ``timeout`` passed first (the request stays open then)."""
        with self._lock:
            entry = self._open.get(request_id) or self._closed.get(request_id)
        if entry is None or not entry.closed.wait(timeout):
            return None
        return entry.decision

    # -- people ----------------------------------------------------------------------------

    def decide(self, decision: Decision) -> PendingRequest:
        """Answer an open request (the holder delivers it). Raises ``StaleRequest`` when it is
        not open and ``WrongAnswer`` when the answer does not fit it."""
        with self._lock:
            entry = self._open.get(decision.request_id)
            if entry is None:
                raise StaleRequest(
                    f"request {decision.request_id} is no longer waiting: it was answered or "
                    "withdrawn (perhaps in the terminal); nothing was sent"
                )
            _check(entry.request, decision)
        closed = self._close(decision.request_id, decision)
        if closed is None:  # closed by another thread in between
            raise StaleRequest(f"request {decision.request_id} was closed meanwhile")
        request = closed.request
        said = f", message {decision.message!r}" if decision.message else ""
        log.info("request %s answered from %s: %s (%s %s %s%s)", request.request_id,
                 decision.origin, decision.verdict, request.agent, request.session_id,
                 request.tool, said)  # fmt: skip
        self._tell(BookChange(request, opened=False, decision=decision))
        return request

    def pending(self) -> tuple[PendingRequest, ...]:
        """Every open request, oldest first."""
        with self._lock:
            requests = [entry.request for entry in self._open.values()]
        return tuple(sorted(requests, key=lambda r: (r.opened_at, r.request_id)))

    def for_session(self, session_id: str) -> tuple[PendingRequest, ...]:
        """The open requests of one session (or launched task, by its task id), oldest first."""
        return tuple(r for r in self.pending() if session_id in (r.session_id, r.task_id))

    def get(self, request_id: str) -> PendingRequest | None:
        with self._lock:
            entry = self._open.get(request_id)
        return None if entry is None else entry.request

    def subscribe(self, callback: Callable[[BookChange], None]) -> Callable[[], None]:
        """``callback`` hears every request opened and closed (on the thread that changed the
        book: return quickly)."""
        with self._lock:
            self._listeners.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return unsubscribe

    # -- inside ----------------------------------------------------------------------------

    def _close(self, request_id: str, decision: Decision | None) -> _Open | None:
        with self._lock:
            entry = self._open.pop(request_id, None)
            if entry is None:
                return None
            entry.decision = decision
            self._closed[request_id] = entry
            while len(self._closed) > 256:  # enough for a ``wait`` racing its close
                del self._closed[next(iter(self._closed))]
        entry.closed.set()
        return entry

    def _tell(self, change: BookChange) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change)
            except Exception:
                log.exception("a decision listener failed")


def _check(request: PendingRequest, decision: Decision) -> None:
    if decision.verdict not in request.verdicts():
        raise WrongAnswer(
            f"request {request.request_id} ({request.kind}, {request.tool}) takes "
            + ", ".join(request.verdicts())
            + f", not {decision.verdict}"
        )
    asked = max(1, len(request.questions))
    if decision.verdict is Verdict.REPLY and len(decision.replies) != asked:
        raise WrongAnswer(
            f"request {request.request_id} asks {asked} question(s); "
            f"{len(decision.replies)} answer(s) given"
        )


def request_json(request: PendingRequest) -> dict[str, object]:
    """A request as the API and the window show it (docs/api.md, "Decisions")."""
    return {
        "request_id": request.request_id,
        "agent": request.agent,
        "session_id": request.session_id,
        "kind": str(request.kind),
        "route": str(request.route),
        "tool": request.tool,
        "summary": request.summary,
        "opened_at": request.opened_at,
        "always_rule": request.always_rule,
        "questions": [
            {"text": q.text, "header": q.header, "options": list(q.options), "multiple": q.multiple}
            for q in request.questions
        ],
        "task_id": request.task_id,
        "host": request.host,
        "verdicts": [str(v) for v in request.verdicts()],
    }


def change_json(change: BookChange) -> dict[str, object]:
    """A change of the book as the events stream sends it."""
    doc: dict[str, object] = {
        "type": "decision",
        "opened": change.opened,
        "request": request_json(change.request),
    }
    if change.decision is not None:
        doc["verdict"] = str(change.decision.verdict)
        doc["origin"] = change.decision.origin
    if change.reason is not None:
        doc["reason"] = change.reason
    return doc
