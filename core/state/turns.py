"""The transcript state machine: records in, where the current turn stands out (pure; any thread).

``reduce_all(state, records)`` folds records into a ``TurnState`` and returns a new one; the
input is never changed. It knows nothing of files or agents: adapters already turned their
lines into records with agent-neutral meaning. Records of sub-agents (``agent_id`` set) never
move the main turn; they only say whether a sub-agent still has work in flight, because a
parent waiting on sub-agents is not done.

Inside one call the records are applied to a mutable draft and frozen once at the end: copying
a frozen dataclass per record was most of the cost of indexing a large history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ..limits import LimitsSeen
from ..records import (
    Activity,
    ApiError,
    Asks,
    AssistantText,
    Bookkeeping,
    Compaction,
    ModelSeen,
    Prompt,
    Record,
    SessionMeta,
    Thinking,
    TitleSet,
    ToolCall,
    ToolResult,
    TurnAborted,
    TurnEnded,
    TurnStarted,
    Unknown,
    UsageReport,
)

ANSWER_KEEP_CHARS = 2000  # enough for a question or a notification body; answers can be huge

# Exact record types looked up before the class patterns below, which try each class in turn
# (a history's every record passes here). A subclass of any of them takes the patterns. Each
# pattern a record fails costs an ``isinstance`` through the Struct metaclass's
# ``__instancecheck__`` (about 70 ns against 25 for a plain class): Codex's ``LimitsSeen``, one
# record in ten, failed all of them before it was listed here.
_MOVING = frozenset(
    {
        Prompt,
        TurnStarted,
        AssistantText,
        Thinking,
        ToolCall,
        ToolResult,
        TurnEnded,
        TurnAborted,
        ApiError,
    }
)
_STILL = frozenset(
    {Bookkeeping, Compaction, LimitsSeen, ModelSeen, SessionMeta, TitleSet, Unknown, UsageReport}
)
_NO_TURN = _STILL | {Activity}  # the types the turn's ``case _`` takes


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
    subagents: tuple[tuple[str, SubagentStatus], ...] = ()
    background_agents: int | None = None  # what the agent said still runs after the turn ended
    # When the main thread last showed the turn moving (a prompt, output, a tool call or its
    # result, the turn's end, tool progress): newer than a hook event, it outranks it.
    moved_at: float | None = None

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
    return reduce_all(state, (record,))


def reduce_all(state: TurnState, records: Iterable[Record]) -> TurnState:
    draft = _Draft(state)
    for record in records:
        if record.agent_id is None:
            draft.apply(record)
        else:
            draft.apply_subagent(record.agent_id, record)
    return draft.freeze(state)


def moves_turn(record: Record) -> bool:
    """True for a main-thread record that shows the turn moving. Not bookkeeping, titles or
    usage, and not the attachments, system notes and hook bookkeeping Claude writes around a
    turn that has already ended (they would make a finished turn look busy again)."""
    if record.agent_id is not None:
        return False
    cls = type(record)
    if cls in _MOVING:
        return True
    if cls in _STILL:
        return False
    if isinstance(record, Activity):
        kind = record.kind
        if "hook" in kind or kind in ("queue-operation", "oversized"):
            return False
        # Claude's "progress/<tool>" lines; Codex's bare command, tool and message events.
        return kind.startswith("progress/") or "/" not in kind
    return isinstance(
        record,
        Prompt
        | TurnStarted
        | AssistantText
        | Thinking
        | ToolCall
        | ToolResult
        | TurnEnded
        | TurnAborted
        | ApiError,
    )


def describe_call(call: PendingCall) -> str:
    """``Bash: npm test`` — the tool and what it was asked to do."""
    return f"{call.name}: {call.summary}" if call.summary else call.name


class _Draft:
    """A ``TurnState`` being edited by one batch of records."""

    __slots__ = (
        "answer",
        "answer_final",
        "background_agents",
        "changed",
        "denied",
        "failure",
        "moved_at",
        "pending",
        "phase",
        "retrying",
        "subagents",
        "subs_changed",
    )

    def __init__(self, s: TurnState) -> None:
        self.phase = s.phase
        self.pending = list(s.pending)
        self.answer = s.answer
        self.answer_final = s.answer_final
        self.failure = s.failure
        self.retrying = s.retrying
        self.denied = s.denied
        self.background_agents = s.background_agents
        self.moved_at = s.moved_at
        self.subagents = dict(s.subagents)
        self.changed = False
        self.subs_changed = False

    def freeze(self, original: TurnState) -> TurnState:
        if not (self.changed or self.subs_changed):
            return original
        return TurnState(
            phase=self.phase,
            pending=tuple(self.pending),
            answer=self.answer,
            answer_final=self.answer_final,
            failure=self.failure,
            retrying=self.retrying,
            denied=self.denied,
            subagents=tuple(sorted(self.subagents.items()))
            if self.subs_changed
            else original.subagents,
            background_agents=self.background_agents,
            moved_at=self.moved_at,
        )

    def _new_turn(self) -> None:
        self.phase = Phase.RUNNING
        self.pending.clear()
        self.answer = None
        self.answer_final = False
        self.failure = self.retrying = self.denied = None
        self.background_agents = None

    def _close_turn(self) -> None:
        self.pending.clear()

    def apply(self, record: Record) -> None:
        ts = record.ts
        if ts is not None and (self.moved_at is None or ts > self.moved_at) and moves_turn(record):
            self.moved_at = ts
            self.changed = True
        if type(record) in _NO_TURN:
            return  # nothing for the turn (the ``case _`` below)
        match record:  # the commonest first (no record class subclasses another)
            case ToolCall():
                changed = self._tool_call(record)
            case ToolResult(call_id=call_id, denied=denied):
                changed = self._tool_result(call_id, denied=denied)
            case Thinking():
                changed = self._thinking()
            case AssistantText(text=text, final=final):
                changed = self._text(text, final=final)
            case Prompt() | TurnStarted():
                self._new_turn()
                changed = True
            case TurnEnded(last_message=last, error=error, background_agents=background):
                changed = self._turn_ended(last, error, background)
            case TurnAborted(reason=reason):
                changed = self._turn_aborted(reason)
            case ApiError(message=message, retrying=True):
                self.phase, self.retrying = Phase.RUNNING, message
                changed = True
            case ApiError(message=message):
                self._close_turn()
                self.phase, self.failure, self.retrying = Phase.FAILED, message, None
                changed = True
            case _:
                changed = False  # activity, usage, titles, bookkeeping: nothing for the turn
        if changed:
            self.changed = True

    # Each record kind's rule; True when the turn changed.

    def _text(self, text: str, *, final: bool) -> bool:
        if self.phase in (Phase.DONE, Phase.FAILED, Phase.IDLE):
            # Output without a prompt we saw: a turn started that the file does not mark.
            self.failure = self.denied = None
        self.phase = Phase.RUNNING if self.pending else Phase.ANSWERED
        self.answer = text[-ANSWER_KEEP_CHARS:]
        self.answer_final = final
        self.retrying = None
        return True

    def _thinking(self) -> bool:
        if self.phase is Phase.RUNNING and self.retrying is None:
            return False
        self.phase = Phase.RUNNING
        self.retrying = None
        return True

    def _tool_call(self, call: ToolCall) -> bool:
        if any(p.call_id == call.call_id for p in self.pending):
            return False
        if self.phase in (Phase.DONE, Phase.FAILED):
            self.failure = self.denied = self.answer = None
        self.pending.append(PendingCall(call.call_id, call.name, call.summary, call.asks, call.ts))
        self.phase = Phase.RUNNING
        self.answer_final = False
        self.retrying = None
        return True

    def _tool_result(self, call_id: str, *, denied: bool) -> bool:
        answered = next((p for p in self.pending if p.call_id == call_id), None)
        if answered is not None:
            self.pending.remove(answered)
        if denied:
            self.denied = describe_call(answered) if answered else "a tool call"
        if self.phase not in (Phase.DONE, Phase.FAILED):
            self.phase = Phase.RUNNING
        return True

    def _turn_ended(self, last: str | None, error: str | None, background: int | None) -> bool:
        if background == 0:
            self._finish_subagents()
        self._close_turn()
        if last:
            self.answer = last[-ANSWER_KEEP_CHARS:]
        self.background_agents = background
        if error:
            self.phase, self.failure = Phase.FAILED, error
        elif self.phase is not Phase.FAILED:
            # (A closing marker after an abort or a failure does not undo it.)
            self.phase, self.answer_final, self.retrying = Phase.DONE, True, None
        return True

    def _turn_aborted(self, reason: str) -> bool:
        if reason == "replaced":
            return False
        self._close_turn()
        if self.denied is not None:
            # The user refused a tool and the agent stopped to ask what to do instead:
            # a deliberate stop, not a failure.
            self.phase, self.answer_final = Phase.DONE, True
        else:
            self.phase = Phase.FAILED
            self.failure = "interrupted" if reason == "interrupted" else f"aborted ({reason})"
        return True

    def _finish_subagents(self) -> None:
        for key, sub in self.subagents.items():
            if not sub.finished:
                self.subagents[key] = SubagentStatus(sub.pending, True, sub.last_ts)
                self.subs_changed = True

    def apply_subagent(self, agent_id: str, record: Record) -> None:
        current = self.subagents.get(agent_id) or SubagentStatus(frozenset(), False, None)
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
            case Prompt() | TurnStarted() | Thinking() | ApiError():
                updated = SubagentStatus(current.pending, False, ts)
            case _:
                # Progress and usage lines: alive, but not a change of what it is doing.
                if current.finished or ts == current.last_ts:
                    return
                updated = SubagentStatus(current.pending, False, ts)
        if updated != current:
            self.subagents[agent_id] = updated
            self.subs_changed = True
