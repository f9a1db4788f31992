"""The hook-event state machine: the agent's own hook events in, the state they imply out
(pure; any thread).

``reduce_all(state, events, traits)`` folds ``HookEvent`` records into a ``HookState`` and
returns a new one; ``traits`` are the agent's (its kit's ``AgentTraits``). Its ``view`` is what
the latest state-changing event says (a ``fusion.HookView``): fusion
lets it outrank the registry and the transcript for as long as nothing newer contradicts it.

What each event means (agent-formats.md 2.5, 2.8, 4.1, 4.3):

- ``UserPromptSubmit``, ``PreToolUse``, ``PostToolUse(Failure)``, ``PostToolBatch``: running.
- ``PermissionRequest``: waiting for approval, or for an answer when the tool is one of the
  agent's question tools (``AgentTraits.question_tools``, declared by its kit); the tool and its
  command are the detail, or the question.
- ``Notification``: ``permission_prompt`` is an approval wait (it comes ~6 s late, so it only
  matters when no ``PermissionRequest`` came first); ``elicitation_*dialog`` waits for an
  answer; ``idle_prompt`` changes nothing (it comes ~60 s after ``Stop``); the rest neither.
- ``Stop`` and Codex's ``agent-turn-complete``: the turn is done, or waits for an answer when
  its last message ends on a question. ``StopFailure``: failed. Codex ``Interrupt``: failed.
- ``SessionEnd``: ended. ``SessionStart`` (not ``compact``, which happens mid-turn) clears
  what earlier events said (a resumed session is no longer ended) and says nothing itself: Codex
  runs it only once the first prompt is in, so "waiting for a prompt" would be wrong there, and
  the files know what a fresh or resumed session is waiting for.
- ``SubagentStart``/``SubagentStop``, compaction and anything unknown: no change.

Sub-agents: an event that carries ``agent_id`` comes from a sub-agent. Its approval waits count
(the person must still answer), but its other events never move the parent: they only end the
sub-agent's own wait, putting back what the parent's events said. A background sub-agent that
keeps working after the parent's ``Stop`` therefore cannot make the parent look busy forever.

Events are applied in the order of their own timestamps: hooks that run concurrently may
append their lines a little out of order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..model import State, WaitingFor
from ..records import HookEvent, Record
from ..sources.base import one_line
from .fusion import AgentTraits, HookView, last_line, question_in

RUNNING_EVENTS = frozenset({"UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                            "PostToolBatch"})  # fmt: skip
TURN_END_EVENTS = frozenset({"Stop", "agent-turn-complete"})
PERMISSION_NOTICES = frozenset({"permission_prompt"})
QUESTION_NOTICES = frozenset({"elicitation_dialog", "elicitation_url_dialog"})
ANSWERED_NOTICES = frozenset({"elicitation_complete", "elicitation_response"})
MID_TURN_STARTS = frozenset({"compact"})
SUB_AGENT_EVENTS = frozenset({"SubagentStart", "SubagentStop"})


@dataclass(frozen=True, slots=True)
class HookState:
    view: HookView | None = None  # what the latest state-changing event implies
    base: HookView | None = None  # what the main thread's latest such event implies
    sub_wait: bool = False  # ``view`` is a sub-agent's wait on top of ``base``
    last_at: float | None = None  # the latest event of any kind
    last_event: str | None = None
    cwd: str | None = None
    transcript_path: str | None = None
    pid: int | None = None
    pid_at: float | None = None  # when ``pid`` last sent an event
    events: int = 0


def reduce(state: HookState, event: HookEvent, traits: AgentTraits) -> HookState:
    return reduce_all(state, (event,), traits)


def reduce_all(state: HookState, records: Iterable[Record], traits: AgentTraits) -> HookState:
    for record in sorted(
        (r for r in records if isinstance(r, HookEvent) and r.ts is not None),
        key=lambda r: r.ts or 0.0,
    ):
        state = _apply(state, record, traits)
    return state


def _apply(state: HookState, e: HookEvent, traits: AgentTraits) -> HookState:
    at = e.ts or 0.0
    newest = state.last_at is None or at >= state.last_at
    updated = replace(
        state,
        events=state.events + 1,
        last_at=at if newest else state.last_at,
        last_event=e.event if newest else state.last_event,
        cwd=(e.cwd or state.cwd) if newest else (state.cwd or e.cwd),
        transcript_path=(e.transcript_path or state.transcript_path)
        if newest
        else (state.transcript_path or e.transcript_path),
    )
    if e.pid is not None and e.pid > 0 and (state.pid_at is None or at >= state.pid_at):
        updated = replace(updated, pid=e.pid, pid_at=at)
    if state.view is not None and at < state.view.at:
        return updated  # older than what we already know: facts only
    return _transition(updated, e, at, traits)


def _transition(state: HookState, e: HookEvent, at: float, traits: AgentTraits) -> HookState:
    if e.agent_id is not None or e.event in SUB_AGENT_EVENTS:
        return _sub_agent(state, e, at, traits)
    if e.event == "SessionStart" and (e.source or "") not in MID_TURN_STARTS:
        return replace(state, view=None, base=None, sub_wait=False)
    view = _implied(state, e, at, traits)
    if view is None:
        return state
    return replace(state, view=view, base=view, sub_wait=False)


def _sub_agent(state: HookState, e: HookEvent, at: float, traits: AgentTraits) -> HookState:
    """A sub-agent's waits show on top of the parent's state; its other events only take its
    own wait away again."""
    if e.event in ("PermissionRequest", "Notification"):
        view = _implied(state, e, at, traits)
        if view is not None and view.state is State.INPUT_REQUIRED:
            return replace(state, view=view, sub_wait=True)
    if state.sub_wait and e.event != "SubagentStart":
        restored = None if state.base is None else replace(state.base, at=at)
        return replace(state, view=restored, sub_wait=False)
    return state


def _implied(state: HookState, e: HookEvent, at: float, traits: AgentTraits) -> HookView | None:
    """The view ``e`` implies, or None when it changes nothing."""
    name = e.event
    if name in RUNNING_EVENTS:
        detail = _call(e) if name == "PreToolUse" else ""
        return HookView(State.RUNNING, None, detail, at, event=name)
    if name == "PermissionRequest":
        if e.tool_name in traits.question_tools:
            return HookView(
                State.INPUT_REQUIRED, WaitingFor.QUESTION, e.tool_summary or "", at, event=name
            )
        return HookView(State.INPUT_REQUIRED, WaitingFor.APPROVAL, _call(e), at, event=name)
    if name == "Notification":
        return _notification(state.view, e, at)
    if name in TURN_END_EVENTS:
        message = e.last_message or ""
        question = question_in(message) if message else None
        if question is not None:
            return HookView(State.INPUT_REQUIRED, WaitingFor.QUESTION, question, at, event=name)
        return HookView(State.DONE, None, last_line(message) if message else "", at, event=name)
    if name == "StopFailure":
        why = one_line(e.error or e.last_message or "") or "the turn failed"
        return HookView(State.FAILED, None, why, at, event=name)
    if name == "Interrupt":
        return HookView(State.FAILED, None, "interrupted", at, event=name)
    if name == "SessionEnd":
        detail = f"session ended ({e.reason})" if e.reason else "session ended"
        return HookView(State.ENDED, None, detail, at, event=name)
    return None


def _notification(current: HookView | None, e: HookEvent, at: float) -> HookView | None:
    kind = e.notification_type or ""
    message = one_line(e.message or "")
    if not kind and "permission" in message.lower():
        kind = "permission_prompt"  # builds before notification types said it in words
    if kind in PERMISSION_NOTICES:
        if current is not None and current.waiting_for is WaitingFor.APPROVAL:
            return None  # the PermissionRequest said it first, and better
        return HookView(
            State.INPUT_REQUIRED, WaitingFor.APPROVAL, "", at, event="Notification", note=message
        )
    if kind in QUESTION_NOTICES:
        return HookView(
            State.INPUT_REQUIRED,
            WaitingFor.QUESTION,
            message or "an MCP server asks for input",
            at,
            event="Notification",
        )
    if kind in ANSWERED_NOTICES and current is not None and current.event == "Notification":
        return HookView(State.RUNNING, None, "", at, event="Notification")
    return None  # idle_prompt, auth_success, agent_* and types this version does not know


def _call(e: HookEvent) -> str:
    """``Bash: npm test`` — the tool and what it was asked to do."""
    tool = e.tool_name or ""
    summary = e.tool_summary or ""
    if tool and summary:
        return f"{tool}: {summary}"
    return tool or summary
