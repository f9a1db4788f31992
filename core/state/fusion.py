"""Fuse every signal about a session into one state, naming the signal that decided (pure).

Strongest first: process liveness (a session whose process is gone is ``ended``), hook events,
the agent's live registry, the screen of our own PTY when agentbar launched the agent, then the
transcript. Weaker signals still refine stronger ones: the
registry says "waiting", the transcript says for which command; the registry says "idle", the
transcript says whether the turn failed or ended on a question.

A hook event is the agent saying what just happened, so it outranks the others, but only until
something newer says otherwise: the registry changed after it (``updated_at``), or the
transcript showed the turn moving after it (``TurnState.moved_at``), and what they now say is a
different state. That is how an approval ends (the hook says "waiting"; once the person says
yes, the registry turns busy and tool progress lands, both newer), how an interrupt shows (Claude
runs no hook for it; the transcript's interrupt line is newer than the last tool hook), and how
a session resumed without hooks takes over from its old ``SessionEnd``. One exception: after a
turn-ending event, answer text alone does not count, since Claude writes the final answer's
line a moment after ``Stop`` and that line is the end the hook already reported. And when the
others agree with the hook but only long after it (``HOOK_AGREEMENT_SECONDS``), the hooks have
stopped coming (uninstalled, a session resumed without them): the newer account is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import SessionState, Source, State, WaitingFor
from ..records import Asks
from ..sources.base import one_line
from .turns import PendingCall, Phase, TurnState, describe_call

SUBAGENT_STALE_SECONDS = 600.0  # a sub-agent silent this long no longer holds its parent back


@dataclass(frozen=True, slots=True)
class AgentTraits:
    """How far an agent's transcript can be trusted on its own, and what its hook events mean
    beyond the shared vocabulary (``state.hooks``)."""

    # Seconds of silence after answer text before the turn counts as done, for agents whose
    # transcript may carry no end-of-turn marker (Claude 2.0.x). None: wait for the marker.
    quiet_done_after: float | None
    # A transcript with no turn yet is usually one being created for the turn about to start
    # (Codex 0.99+ creates its rollout at the first prompt, line by line): "waiting for a
    # prompt" waits a moment for that turn before it is reported.
    new_file_settles: bool = False
    # The agent's tools that exist to ask the person something (its question tool): a hook's
    # permission request for one of them waits for an answer, not for an approval.
    question_tools: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RegistryView:
    """The live registry's account (Claude ``sessions/<pid>.json``), already checked against a
    live process."""

    status: str | None  # "busy", "idle", "waiting"
    waiting_for: str | None
    updated_at: float | None
    active_at: float | None = None  # when it last said "busy"


@dataclass(frozen=True, slots=True)
class HookView:
    """The state the latest hook event implies (``state.hooks`` folds the events into it)."""

    state: State
    waiting_for: WaitingFor | None
    detail: str  # empty: borrow it from the transcript (the pending call, the answer)
    at: float  # when the hook ran (epoch seconds)
    event: str = ""  # the hook event that set it
    note: str = ""  # a generic text, shown only when nothing better is known


# Newer evidence that agrees with a hook this much later means the hooks stopped coming.
HOOK_AGREEMENT_SECONDS = 30.0
# Events after which the turn is over: the final answer's own line may still land after them.
TURN_OVER_EVENTS = frozenset(
    {"Stop", "agent-turn-complete", "StopFailure", "Interrupt", "SessionEnd"}
)


@dataclass(frozen=True, slots=True)
class PtyView:
    """What the screen of a task agentbar launched shows (its own PTY): an approval prompt is
    up, or went away at ``changed_at``; or the program exited."""

    waiting: bool = False
    changed_at: float | None = None  # when a prompt last came or went (None: never one)
    question: str = ""
    exited: bool = False
    detail: str = ""  # how it exited


@dataclass(frozen=True, slots=True)
class Signals:
    turn: TurnState
    registry: RegistryView | None = None
    hook: HookView | None = None
    alive: bool | None = None  # None: liveness not known yet
    last_activity: float | None = None  # the latest record's time (the agent's clock)
    pty: PtyView | None = None  # set for a session a launched task runs


def decide(signals: Signals, now: float, traits: AgentTraits) -> SessionState:
    hook = signals.hook
    if signals.alive is False:
        if hook is not None and hook.state is State.ENDED and not _hook_outdated(hook, signals):
            return _from_hook(hook, signals, now)  # it said so itself before it went
        if signals.pty is not None and signals.pty.exited:
            detail = f"agent exited ({signals.pty.detail})" if signals.pty.detail else ""
            return SessionState(
                state=State.ENDED, source=Source.PTY, detail=detail or "agent exited"
            )
        return SessionState(state=State.ENDED, source=Source.PROCESS, detail="agent exited")
    fallback = _without_hook(signals, now, traits)
    if hook is None or _superseded(hook, fallback, signals):
        return fallback
    return _from_hook(hook, signals, now)


def _without_hook(signals: Signals, now: float, traits: AgentTraits) -> SessionState:
    if signals.registry is not None:
        decided = _from_registry(signals.registry, signals.turn, now)
        if decided is not None:
            return decided
    transcript = _from_transcript(signals.turn, signals.last_activity, now, traits)
    if signals.pty is not None:
        return _from_pty(signals.pty, signals.turn, transcript, now)
    return transcript


def _from_pty(pty: PtyView, turn: TurnState, transcript: SessionState, now: float) -> SessionState:
    """Our own screen: an approval prompt on it is an approval wait, whatever the transcript
    can tell (Codex never writes the request down). Once it went away, and until the
    transcript moves on, the call it asked about runs (approved) or is about to be refused."""
    if pty.waiting:
        asking = _asking_call(turn) or (turn.pending[-1] if turn.pending else None)
        detail = describe_call(asking) if asking else pty.question or "waiting for approval"
        return SessionState(
            state=State.INPUT_REQUIRED,
            waiting_for=WaitingFor.APPROVAL,
            detail=detail,
            source=Source.PTY,
        )
    gone_at = pty.changed_at
    if (
        gone_at is not None
        and turn.phase is Phase.RUNNING
        and (turn.moved_at is None or turn.moved_at < gone_at)
        and transcript.state in (State.RUNNING, State.INPUT_REQUIRED)
        and transcript.waiting_for is not WaitingFor.QUESTION
    ):
        open_subs = turn.open_subagents(now, SUBAGENT_STALE_SECONDS)
        return SessionState(
            state=State.RUNNING, detail=_running_detail(turn, open_subs), source=Source.PTY
        )
    return transcript


def _superseded(hook: HookView, fallback: SessionState, signals: Signals) -> bool:
    """True when the registry or the transcript says something else and said it after the
    hook event, or says the same long after it (hooks stopped coming: a session resumed
    without them must not show a days-old last message)."""
    turn = signals.turn
    if (
        hook.event == "PreToolUse"
        and fallback.source is Source.TRANSCRIPT
        and fallback.state is State.INPUT_REQUIRED
        and turn.phase is Phase.RUNNING
        and _asking_call(turn) is not None
    ):
        # The call it announces asks by nature (a question tool, a command the policy puts to
        # the person): Codex runs PreToolUse after writing that call and before asking.
        return True
    reg = signals.registry
    if fallback.source is Source.REGISTRY:
        evidence = None if reg is None else reg.updated_at
    elif fallback.source is Source.PTY:
        evidence = None if signals.pty is None else signals.pty.changed_at
    else:
        evidence = signals.turn.moved_at
    if evidence is None or evidence <= hook.at:
        return False
    if (fallback.state, fallback.waiting_for) == (hook.state, hook.waiting_for):
        return evidence > hook.at + HOOK_AGREEMENT_SECONDS
    return not (
        hook.event in TURN_OVER_EVENTS
        and fallback.state is State.RUNNING
        and signals.turn.phase is Phase.ANSWERED
    )


def _hook_outdated(hook: HookView, signals: Signals) -> bool:
    moved = signals.turn.moved_at
    return moved is not None and moved > hook.at


def _from_hook(hook: HookView, signals: Signals, now: float) -> SessionState:
    turn = signals.turn
    detail = hook.detail
    match hook.state:
        case State.INPUT_REQUIRED if not detail:
            asking = _asking_call(turn) or (turn.pending[-1] if turn.pending else None)
            detail = describe_call(asking) if asking else hook.note or "waiting for you"
        case State.RUNNING if not detail or _hook_outdated(hook, signals):
            detail = _running_detail(turn, turn.open_subagents(now, SUBAGENT_STALE_SECONDS))
        case State.DONE:
            return _hook_done(hook, turn, now)
        case State.FAILED if not detail:
            detail = one_line(turn.failure or "failed")
        case _:
            pass
    return SessionState(
        state=hook.state, waiting_for=hook.waiting_for, detail=detail, source=Source.HOOK
    )


def _hook_done(hook: HookView, turn: TurnState, now: float) -> SessionState:
    provisional = False
    detail = hook.detail
    if not detail and hook.event in TURN_OVER_EVENTS:
        # No last message in the event (older agent builds): the transcript has the answer,
        # or will have it in a moment.
        question = _question(turn)
        if question is not None:
            return SessionState(
                state=State.INPUT_REQUIRED,
                waiting_for=WaitingFor.QUESTION,
                detail=question.detail,
                source=Source.HOOK,
            )
        detail = _done_detail(turn)
        provisional = turn.phase is Phase.RUNNING
    open_subs = turn.open_subagents(now, SUBAGENT_STALE_SECONDS)
    if open_subs and hook.event in TURN_OVER_EVENTS:
        return SessionState(
            state=State.RUNNING, detail=_subagent_detail(open_subs), source=Source.TRANSCRIPT
        )
    return SessionState(
        state=State.DONE, detail=detail, source=Source.HOOK, provisional=provisional
    )


def _from_registry(reg: RegistryView, turn: TurnState, now: float) -> SessionState | None:
    status = (reg.status or "").lower()
    if status == "waiting":
        # The agent says it waits: for the call that asks by nature, else for its newest call.
        asking = _asking_call(turn) or (turn.pending[-1] if turn.pending else None)
        waiting_for = WaitingFor.APPROVAL
        # "permission prompt", "sandbox request": something to allow. "input needed", "dialog
        # open" (2.1.3xx: a choice to make, or a panel such as /status): something to answer.
        said = (reg.waiting_for or "").lower()
        if (asking is not None and asking.asks is Asks.QUESTION) or (
            "permission" not in said and any(w in said for w in ("input", "question", "dialog"))
        ):
            waiting_for = WaitingFor.QUESTION
        if asking is not None:
            detail = asking.summary if waiting_for is WaitingFor.QUESTION else describe_call(asking)
        else:
            detail = reg.waiting_for or "waiting for you"
        return SessionState(
            state=State.INPUT_REQUIRED,
            waiting_for=waiting_for,
            detail=detail,
            source=Source.REGISTRY,
            # The transcript line naming the tool may land a moment after the registry (no
            # line will name a dialog).
            provisional=asking is None and "dialog" not in said,
        )
    if status == "busy":
        open_subs = turn.open_subagents(now, SUBAGENT_STALE_SECONDS)
        return SessionState(
            state=State.RUNNING, detail=_running_detail(turn, open_subs), source=Source.REGISTRY
        )
    if status == "idle":
        if reg.active_at is not None and (turn.moved_at is None or turn.moved_at < reg.active_at):
            # Idle, but the transcript shows nothing of the turn that ran since it said busy:
            # Claude 2.1.3xx writes a quick turn's lines just after the registry turns idle.
            # What the transcript holds is an older turn's end; wait for this one's.
            return SessionState(
                state=State.DONE, detail="turn finished", source=Source.REGISTRY, provisional=True
            )
        if turn.phase is Phase.FAILED:
            return _failed(turn)
        question = _question(turn)
        if question is not None:
            return question
        open_subs = turn.open_subagents(now, SUBAGENT_STALE_SECONDS)
        if open_subs:
            return SessionState(
                state=State.RUNNING,
                detail=_subagent_detail(open_subs),
                source=Source.TRANSCRIPT,
            )
        return SessionState(
            state=State.DONE,
            detail=_done_detail(turn),
            source=Source.REGISTRY,
            # The registry turns idle a moment before the transcript's final answer lands:
            # wait briefly for it, so the one "done" event carries the answer.
            provisional=turn.phase is Phase.RUNNING,
        )
    return None  # a status this version of agentbar does not know: trust the transcript


def _from_transcript(
    turn: TurnState, last_activity: float | None, now: float, traits: AgentTraits
) -> SessionState:
    open_subs = turn.open_subagents(now, SUBAGENT_STALE_SECONDS)
    match turn.phase:
        case Phase.FAILED:
            return _failed(turn)
        case Phase.IDLE:
            return SessionState(
                state=State.DONE,
                detail="waiting for a prompt",
                source=Source.TRANSCRIPT,
                provisional=traits.new_file_settles,
            )
        case Phase.RUNNING:
            asking = _asking_call(turn)
            if asking is not None:
                waiting = (
                    WaitingFor.QUESTION if asking.asks is Asks.QUESTION else WaitingFor.APPROVAL
                )
                detail = asking.summary if waiting is WaitingFor.QUESTION else describe_call(asking)
                return SessionState(
                    state=State.INPUT_REQUIRED,
                    waiting_for=waiting,
                    detail=detail,
                    source=Source.TRANSCRIPT,
                )
            return SessionState(
                state=State.RUNNING,
                detail=_running_detail(turn, open_subs),
                source=Source.TRANSCRIPT,
            )
        case Phase.ANSWERED:
            quiet = traits.quiet_done_after
            settled = turn.answer_final or (
                quiet is not None and last_activity is not None and now - last_activity >= quiet
            )
            if not settled:
                return SessionState(
                    state=State.RUNNING,
                    detail=_running_detail(turn, open_subs),
                    source=Source.TRANSCRIPT,
                )
    # DONE, or an answer that has settled.
    question = _question(turn)
    if question is not None:
        return question
    if open_subs:
        return SessionState(
            state=State.RUNNING, detail=_subagent_detail(open_subs), source=Source.TRANSCRIPT
        )
    return SessionState(state=State.DONE, detail=_done_detail(turn), source=Source.TRANSCRIPT)


def _asking_call(turn: TurnState) -> PendingCall | None:
    """The newest pending call that by itself asks the user something (a question tool, or a
    call the agent's policy will put to the user)."""
    for call in reversed(turn.pending):
        if call.asks is not Asks.NOTHING:
            return call
    return None


def _failed(turn: TurnState) -> SessionState:
    return SessionState(
        state=State.FAILED, detail=one_line(turn.failure or "failed"), source=Source.TRANSCRIPT
    )


def _question(turn: TurnState) -> SessionState | None:
    asked = question_in(turn.answer) if turn.answer else None
    if asked is None:
        return None
    return SessionState(
        state=State.INPUT_REQUIRED,
        waiting_for=WaitingFor.QUESTION,
        detail=asked,
        source=Source.TRANSCRIPT,
    )


def _running_detail(turn: TurnState, open_subagents: int) -> str:
    if turn.retrying:
        return f"retrying after: {one_line(turn.retrying, 120)}"
    if turn.pending:
        return describe_call(turn.pending[-1])
    if open_subagents:
        return _subagent_detail(open_subagents)
    return "working"


def _subagent_detail(count: int) -> str:
    return "waiting for 1 sub-agent" if count == 1 else f"waiting for {count} sub-agents"


def _done_detail(turn: TurnState) -> str:
    if turn.denied and turn.phase is Phase.DONE:
        return f"stopped: you denied {turn.denied}"
    return last_line(turn.answer) if turn.answer else "turn finished"


_CODE_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)
_QUESTION_MARKS = ("?", "？")


def question_in(answer: str) -> str | None:
    """The question a final answer ends on, or None. Only the answer's last paragraph counts
    (a question asked along the way and then answered is not a question to the user), code
    blocks are ignored, and closing Markdown emphasis is looked through."""
    prose = _CODE_FENCE.sub("", answer).rstrip()
    if not prose:
        return None
    last = prose.split("\n\n")[-1].strip()
    lines = [ln.strip() for ln in last.splitlines() if ln.strip()]
    if not lines:
        return None
    tail = lines[-1].rstrip("*_`) ").rstrip()
    if not tail.endswith(_QUESTION_MARKS):
        return None
    # The sentence that carries the question mark.
    sentences = re.split(r"(?<=[.!。！])\s+", tail)
    return one_line(sentences[-1].lstrip("-*> ").strip() or tail)


def last_line(text: str) -> str:
    """The last non-empty line of an answer, readable on its own."""
    for raw in reversed(_CODE_FENCE.sub("", text).splitlines()):
        line = " ".join(raw.split())
        if line:
            return one_line(line)
    return one_line(text)
