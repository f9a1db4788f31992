"""The transcript state machine: records in, where the current turn stands out (pure; any thread).

``reduce(state, record)`` folds one normalised record into a ``TurnState``. It knows nothing of
files or agents: adapters already turned their lines into records with agent-neutral meaning.
Records of sub-agents (``agent_id`` set) never move the main turn; they only say whether a
sub-agent still has work in flight, because a parent waiting on sub-agents is not done.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from agentbar.core.records import (
    ApiError,
    Asks,
    AssistantText,
    Bookkeeping,
    Prompt,
    Record,
    Thinking,
    TitleSet,
    ToolCall,
    ToolResult,
    TurnAborted,
    TurnEnded,
    TurnStarted,
)

ANSWER_KEEP_CHARS = 2000  # enough for a question or a notification body; answers can be huge


class Phase(StrEnum):
    IDLE = "idle"  # no turn seen yet
    RUNNING = "running"  # a turn is in progress
    ANSWERED = "answered"  # the latest main-thread output is answer text with nothing pending
    DONE = "done"  # the agent itself said the turn ended
    FAILED = "failed"  # the turn ended on an error or was aborted


@dataclass(frozen=True, slots=True)
class PendingCall:
    call_id: str
    name: str
    summary: str
    asks: Asks
    since: float | None


@dataclass(frozen=True, slots=True)
class SubagentStatus:
    pending: frozenset[str]
    finished: bool
    last_ts: float | None


@dataclass(frozen=True, slots=True)
class TurnState:
    phase: Phase = Phase.IDLE
    pending: tuple[PendingCall, ...] = ()
    answer: str | None = None  # the turn's latest answer text (its tail)
    answer_final: bool = False  # the agent marked that answer as the turn's last message
    failure: str | None = None  # why the turn failed
    retrying: str | None = None  # an API error the agent is retrying
    denied: str | None = None  # the call the user refused in this turn ("Bash: rm -rf x")
    last_ts: float | None = None  # time of the latest main-thread record
    subagents: tuple[tuple[str, SubagentStatus], ...] = ()
    background_agents: int | None = None  # what the agent said still runs after the turn ended

    def open_subagents(self, now: float, stale_after: float) -> int:
        """Sub-agents with work in flight that wrote something within ``stale_after`` seconds."""
        count = 0
        for _, sub in self.subagents:
            if sub.finished:
                continue
            if sub.last_ts is not None and now - sub.last_ts > stale_after:
                continue
            count += 1
        return count


def reduce(state: TurnState, record: Record) -> TurnState:
    if record.agent_id is not None:
        return _reduce_subagent(state, record.agent_id, record)
    ts = record.ts if record.ts is not None else state.last_ts
    match record:
        case Prompt() | TurnStarted():
            return TurnState(
                phase=Phase.RUNNING,
                last_ts=ts,
                subagents=state.subagents,
            )
        case AssistantText(text=text, final=final):
            phase = Phase.RUNNING if state.pending else Phase.ANSWERED
            if state.phase in (Phase.DONE, Phase.FAILED, Phase.IDLE):
                # Output without a prompt we saw: a turn started that the file does not mark.
                state = replace(state, failure=None, denied=None, retrying=None)
            return replace(
                state,
                phase=phase,
                answer=text[-ANSWER_KEEP_CHARS:],
                answer_final=final,
                retrying=None,
                last_ts=ts,
            )
        case Thinking():
            return replace(state, phase=Phase.RUNNING, retrying=None, last_ts=ts)
        case ToolCall(call_id=call_id, name=name, summary=summary, asks=asks):
            if any(p.call_id == call_id for p in state.pending):
                return replace(state, last_ts=ts)
            call = PendingCall(call_id, name, summary, asks, record.ts)
            if state.phase in (Phase.DONE, Phase.FAILED):
                state = replace(state, failure=None, denied=None, answer=None)
            return replace(
                state,
                phase=Phase.RUNNING,
                pending=(*state.pending, call),
                answer_final=False,
                retrying=None,
                last_ts=ts,
            )
        case ToolResult(call_id=call_id, denied=denied):
            answered = next((p for p in state.pending if p.call_id == call_id), None)
            pending = tuple(p for p in state.pending if p.call_id != call_id)
            denied_text = state.denied
            if denied and answered is not None:
                denied_text = describe_call(answered)
            elif denied:
                denied_text = "a tool call"
            phase = Phase.RUNNING if state.phase not in (Phase.DONE, Phase.FAILED) else state.phase
            return replace(state, phase=phase, pending=pending, denied=denied_text, last_ts=ts)
        case TurnEnded(last_message=last, error=error, background_agents=background):
            subagents = state.subagents
            if background == 0:
                subagents = tuple((k, replace(v, finished=True)) for k, v in subagents)
            closed = replace(
                state,
                pending=(),
                answer=last[-ANSWER_KEEP_CHARS:] if last else state.answer,
                last_ts=ts,
                subagents=subagents,
                background_agents=background,
            )
            if error:
                return replace(closed, phase=Phase.FAILED, failure=error)
            if state.phase is Phase.FAILED:
                # The turn was already aborted or failed; a closing marker does not undo that.
                return closed
            return replace(closed, phase=Phase.DONE, answer_final=True, retrying=None)
        case TurnAborted(reason=reason):
            if reason == "replaced":
                return replace(state, last_ts=ts)
            if state.denied is not None:
                # The user refused a tool and the agent stopped to ask what to do instead:
                # a deliberate stop, not a failure.
                return replace(state, phase=Phase.DONE, pending=(), answer_final=True, last_ts=ts)
            failure = "interrupted" if reason == "interrupted" else f"aborted ({reason})"
            return replace(state, phase=Phase.FAILED, pending=(), failure=failure, last_ts=ts)
        case ApiError(message=message, retrying=True):
            return replace(state, phase=Phase.RUNNING, retrying=message, last_ts=ts)
        case ApiError(message=message):
            return replace(
                state, phase=Phase.FAILED, pending=(), failure=message, retrying=None, last_ts=ts
            )
        case Bookkeeping() | TitleSet():
            return state
        case _:
            return replace(state, last_ts=ts) if ts != state.last_ts else state


def describe_call(call: PendingCall) -> str:
    """``Bash: npm test`` — the tool and what it was asked to do."""
    return f"{call.name}: {call.summary}" if call.summary else call.name


def _reduce_subagent(state: TurnState, agent_id: str, record: Record) -> TurnState:
    subs = dict(state.subagents)
    current = subs.get(agent_id, SubagentStatus(frozenset(), False, None))
    ts = record.ts if record.ts is not None else current.last_ts
    match record:
        case ToolCall(call_id=call_id):
            updated = SubagentStatus(current.pending | {call_id}, False, ts)
        case ToolResult(call_id=call_id):
            updated = SubagentStatus(current.pending - {call_id}, False, ts)
        case AssistantText():
            # A sub-agent's answer with nothing pending is its report back: it is finished
            # unless more work follows.
            updated = SubagentStatus(current.pending, not current.pending, ts)
        case TurnEnded() | TurnAborted() | ApiError(retrying=False):
            updated = SubagentStatus(frozenset(), True, ts)
        case Bookkeeping() | TitleSet():
            return state
        case _:
            updated = SubagentStatus(current.pending, False, ts)
    if updated == current:
        return state
    subs[agent_id] = updated
    return replace(state, subagents=tuple(sorted(subs.items())))
