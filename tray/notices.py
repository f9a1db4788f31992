"""What a notification says and does: the notice for one session's transition, or the summary
of a burst (pure values and wording; built on the tray's worker thread).

The title names the agent and the project; the body says what the session waits for (the
command, the question) or the last line of its answer or error. Clicking a notice, or its
"Open" button, runs its action: the session's replay, which opens at the point that needs the
user (a summary opens the board). Buttons are data too, so a later feature can add its own
(approve or deny a task agentbar launched) through ``Policy(buttons=...)``.

A request the decision book holds is told by a notice of its own (``Transition.request``):
Approve, Deny and "Always allow" (the body says the exact rule it adds), or a question's options
and, where the notification server offers one, an inline reply; its ``tag`` lets the tray
withdraw it the moment the request closes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.decisions import PendingRequest, RequestKind, Verdict
from ..core.errors import Fault
from ..core.model import Agent, SessionKey, SessionSnapshot, State, StateChange, WaitingFor
from . import actions
from .actions import Action
from .answer_entries import (
    always_label,
    answer_action,
    option_action,
    single_options,
    takes_text,
)
from .presenter import AgentNames, agent_name, project_name
from .text import on_host, shorten

BODY_CHARS = 200
SUMMARY_LINES = 5


@dataclass(frozen=True, slots=True)
class Transition:
    """One session's move into a new state, as the notification policy sees it."""

    key: SessionKey
    project: str | None
    title: str | None
    state: State
    waiting_for: WaitingFor | None
    detail: str
    since: float  # when the session entered this state (the engine's state_since)
    agent_name: str = ""  # what a person calls the agent ("Claude Code"); "": its wire name
    request: PendingRequest | None = None  # a request the decision book holds, to answer

    @classmethod
    def of_request(
        cls, request: PendingRequest, snap: SessionSnapshot | None, names: AgentNames
    ) -> Transition:
        """The notice-worthy news that ``request`` opened (``snap``: its session, if the engine
        knows it)."""
        return cls(
            agent_name=agent_name(names, Agent(request.agent)),
            key=SessionKey(Agent(request.agent), request.session_id, request.host),
            project=snap.project if snap is not None else None,
            title=snap.title if snap is not None else None,
            state=State.INPUT_REQUIRED,
            waiting_for=(
                WaitingFor.QUESTION if request.kind is RequestKind.QUESTION else WaitingFor.APPROVAL
            ),
            detail=_request_detail(request),
            since=request.opened_at,
            request=request,
        )

    @classmethod
    def of(cls, change: StateChange, names: AgentNames) -> Transition:
        snap = change.snapshot
        return cls(
            agent_name=agent_name(names, snap.key.agent),
            key=snap.key,
            project=snap.project,
            title=snap.title,
            state=snap.state.state,
            waiting_for=snap.state.waiting_for,
            detail=snap.state.detail,
            since=snap.state_since,
        )


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    action: Action


@dataclass(frozen=True, slots=True)
class Notice:
    title: str
    body: str
    click: Action
    buttons: tuple[Button, ...] = ()
    urgent: bool = False  # needs the user (input_required) rather than news
    sound: bool = False
    sessions: tuple[SessionKey, ...] = ()  # the sessions it is about
    tag: str = ""  # names it to withdraw it ("": never withdrawn)
    requests: tuple[str, ...] = ()  # the ids of the decision book's requests it answers
    reply: Button | None = None  # an inline reply (its text comes back in ``Action.text``)


def problem_notice(fault: Fault) -> Notice:
    """A runtime fault or a failed action, told in full: its message carries the remedy."""
    return Notice(title=fault.title, body=fault.message, click=actions.BOARD, urgent=True)


def headline(t: Transition) -> str:
    who = f"{t.agent_name or t.key.agent} in {project_name(t.project)}{on_host(t.key.host)}"
    match t.state:
        case State.INPUT_REQUIRED if t.waiting_for is WaitingFor.QUESTION:
            return f"{who} has a question"
        case State.INPUT_REQUIRED:
            return f"{who} needs your approval"
        case State.FAILED:
            return f"{who} failed"
        case _:
            return f"{who} finished"


def body(t: Transition) -> str:
    """The command or question it waits for, else the last line of the answer or error."""
    lines = [line.strip() for line in t.detail.splitlines() if line.strip()]
    # A question may span lines: all of it, shortened. An answer: its last line.
    text = " ".join(lines) if t.state is State.INPUT_REQUIRED else (lines[-1] if lines else "")
    return shorten(text or t.title or "", BODY_CHARS)


def single(t: Transition, extra: tuple[Button, ...] = ()) -> Notice:
    if t.request is not None:
        return request_notice(t, t.request)
    open_it = actions.open_session(t.key)
    return Notice(
        title=headline(t),
        body=body(t),
        click=open_it,
        buttons=(Button("Open", open_it), *extra),
        urgent=t.state is State.INPUT_REQUIRED,
        sessions=(t.key,),
    )


def request_tag(request_id: str) -> str:
    return f"request-{request_id}"


def request_notice(t: Transition, request: PendingRequest) -> Notice:
    """A request's own notice: the buttons that answer it, named by its id."""
    open_it = actions.open_session(t.key)
    text = body(t)
    if request.always_rule is not None:
        text = f"{text}\nAlways allow adds: {shorten(request.always_rule, BODY_CHARS)}"
    if request.kind is RequestKind.QUESTION:
        buttons = tuple(
            Button(shorten(o, 40), option_action(request, i))
            for i, o in enumerate(single_options(request))
        )
        reply = None
        if takes_text(request):
            reply = Button("Reply", answer_action(request, Verdict.REPLY))
        buttons = (*buttons, Button("Open", open_it))
    else:
        reply = None
        buttons = (
            Button("Approve", answer_action(request, Verdict.ALLOW)),
            Button("Deny", answer_action(request, Verdict.DENY)),
        )
        if request.always_rule is not None:
            always = answer_action(request, Verdict.ALLOW_ALWAYS)
            buttons += (Button(always_label(request.always_rule), always),)
    return Notice(
        title=headline(t),
        body=text,
        click=open_it,
        buttons=buttons,
        urgent=True,
        sessions=(t.key,),
        tag=request_tag(request.request_id),
        requests=(request.request_id,),
        reply=reply,
    )


def _request_detail(request: PendingRequest) -> str:
    if request.kind is RequestKind.QUESTION and request.questions:
        return "\n".join(q.text for q in request.questions)
    return f"{request.tool}: {request.summary}" if request.summary else request.tool


def summary(burst: list[Transition]) -> Notice:
    """Several sessions at once: one notice that counts them and names the first few."""
    needs = sum(1 for t in burst if t.state is State.INPUT_REQUIRED)
    failed = sum(1 for t in burst if t.state is State.FAILED)
    finished = len(burst) - needs - failed
    parts = [
        text
        for n, text in (
            (needs, f"{needs} need{'s' * (needs == 1)} you"),
            (finished, f"{finished} finished"),
            (failed, f"{failed} failed"),
        )
        if n
    ]
    lines = [
        shorten(
            f"{t.agent_name or t.key.agent} · {project_name(t.project)}{on_host(t.key.host)}: "
            f"{_what(t)}",
            80,
        )
        for t in burst[:SUMMARY_LINES]
    ]
    if len(burst) > SUMMARY_LINES:
        lines.append(f"and {len(burst) - SUMMARY_LINES} more")
    # Withdrawn once every request it tells of is closed (a summary without any: never).
    ids = tuple(t.request.request_id for t in burst if t.request is not None)
    if len(ids) < len(burst):
        ids = ()
    return Notice(
        title=f"{len(burst)} agent sessions: {', '.join(parts)}",
        body="\n".join(lines),
        click=actions.BOARD,
        buttons=(Button("Open", actions.BOARD),),
        urgent=needs > 0,
        sessions=tuple(t.key for t in burst),
        tag=f"summary-{'-'.join(ids)}" if ids else "",
        requests=ids,
    )


def _what(t: Transition) -> str:
    match t.state:
        case State.INPUT_REQUIRED if t.waiting_for is WaitingFor.QUESTION:
            return "has a question"
        case State.INPUT_REQUIRED:
            return "needs approval"
        case State.FAILED:
            return "failed"
        case _:
            return "finished"
