"""Normalised transcript records: what an adapter turns each line into (pure values, any thread).

Adapters (in each agent's package, ``agentbar.core.agents``) are the only code that knows an
agent's file shapes; everything downstream (state machines, facts, index) reads these records.
Every record carries ``ts`` (the agent's own timestamp in epoch seconds, or None when the line
had none) and ``agent_id`` (the sub-agent that produced it; None for the session's main
thread).

Records (and ``Usage``) are frozen msgspec Structs, not frozen dataclasses: a cold index builds
one or more per transcript line (378,628 records and ~88,000 ``Usage`` values for the 1 GiB
bench corpus), and a frozen, slotted dataclass pays ``object.__setattr__`` per field: 0.49 us
for an ``Activity``, 0.82 us for a ``ToolCall``, 0.73 us for a ``Usage``, against 0.05-0.06 us
for the same Structs (timeit, issue 14). They compare, hash and pickle as the dataclasses did;
read and copy them with ``msgspec.structs`` (``replace``, ``asdict``, ``fields``), not
``dataclasses``. A parser may still fill ``ts`` and ``agent_id`` in place on a record it has
just built, through the slot's descriptor (``Record.__dict__["ts"].__set__``), as
``agents/codex/rollout.py`` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

import msgspec


class Asks(StrEnum):
    """What a pending tool call asks of the user, as far as the call itself shows."""

    # An ordinary tool: it may run or wait for approval; the call alone cannot tell which.
    NOTHING = "nothing"
    QUESTION = "question"  # the tool exists to ask the user (AskUserQuestion, request_user_input)
    APPROVAL = "approval"  # the tool always needs a yes (ExitPlanMode) or the policy makes it ask


# The most tokens one count holds: adapters clamp what a line says to it and sums saturate at
# it, so a count always fits SQLite's INTEGER and reads exactly as a JavaScript number (2^53-1).
TOKEN_LIMIT = 2**53 - 1


def _capped(total: int) -> int:
    return total if total <= TOKEN_LIMIT else TOKEN_LIMIT


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Token counts. ``input_tokens`` excludes cached input, as Anthropic counts it;
    ``cache_creation_1h_tokens`` is the part of ``cache_creation_tokens`` written to the one-hour
    cache (priced higher than the five-minute one). Each count is in 0..``TOKEN_LIMIT``; a sum
    stops at the limit."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_creation_1h_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=_capped(self.input_tokens + other.input_tokens),
            output_tokens=_capped(self.output_tokens + other.output_tokens),
            cache_read_tokens=_capped(self.cache_read_tokens + other.cache_read_tokens),
            cache_creation_tokens=_capped(self.cache_creation_tokens + other.cache_creation_tokens),
            cache_creation_1h_tokens=_capped(
                self.cache_creation_1h_tokens + other.cache_creation_1h_tokens
            ),
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens - other.input_tokens,
            output_tokens=self.output_tokens - other.output_tokens,
            cache_read_tokens=self.cache_read_tokens - other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens - other.cache_creation_tokens,
            cache_creation_1h_tokens=self.cache_creation_1h_tokens - other.cache_creation_1h_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_creation_1h_tokens": self.cache_creation_1h_tokens,
        }

    def covers(self, other: Usage) -> bool:
        """True when every count is at least ``other``'s (a later copy of the same message)."""
        return (
            self.input_tokens >= other.input_tokens
            and self.output_tokens >= other.output_tokens
            and self.cache_read_tokens >= other.cache_read_tokens
            and self.cache_creation_tokens >= other.cache_creation_tokens
            and self.cache_creation_1h_tokens >= other.cache_creation_1h_tokens
        )


class Record(msgspec.Struct, frozen=True, kw_only=True):
    ts: float | None = None
    agent_id: str | None = None


class SessionMeta(Record, frozen=True, kw_only=True):
    """Who the session is: emitted once per stream, when the adapter first learns it."""

    session_id: str
    cwd: str | None = None
    cli_version: str | None = None
    parent_session_id: str | None = None  # set when this stream is a sub-agent of another session
    forked_from: str | None = None
    originator: str | None = None


class Prompt(Record, frozen=True, kw_only=True):
    """Text the user typed: a turn starts."""

    text: str


class AssistantText(Record, frozen=True, kw_only=True):
    """Visible answer text. ``final`` is True when the agent marked the turn's last message."""

    text: str
    message_id: str | None = None
    final: bool = False


class Thinking(Record, frozen=True, kw_only=True):
    text: str


class ToolCall(Record, frozen=True, kw_only=True):
    call_id: str
    name: str
    summary: str  # one line a person can read: the command, the file, the question
    asks: Asks = Asks.NOTHING


class ToolResult(Record, frozen=True, kw_only=True):
    call_id: str
    is_error: bool = False
    denied: bool = False  # the user (or a policy) refused the call


class TurnStarted(Record, frozen=True, kw_only=True):
    turn_id: str | None = None


class TurnEnded(Record, frozen=True, kw_only=True):
    """The agent itself says the turn is over. ``error`` set means it ended on a failure."""

    last_message: str | None = None
    error: str | None = None
    background_agents: int | None = None  # sub-agents the agent says still run after the turn


class TurnAborted(Record, frozen=True, kw_only=True):
    reason: str  # "interrupted", "replaced", ...


class ApiError(Record, frozen=True, kw_only=True):
    message: str
    retrying: bool = False


class UsageReport(Record, frozen=True, kw_only=True):
    """One API response's token usage. ``key`` de-duplicates split copies of one response."""

    usage: Usage
    key: str | None = None


class ModelSeen(Record, frozen=True, kw_only=True):
    model: str


class TitleSet(Record, frozen=True, kw_only=True):
    """A title the agent or the user gave the session; higher ``rank`` wins."""

    title: str
    rank: int


class Compaction(Record, frozen=True, kw_only=True):
    trigger: str | None = None


class Activity(Record, frozen=True, kw_only=True):
    """A line that only shows the agent is alive and working (progress ticks, attachments)."""

    kind: str


class Bookkeeping(Record, frozen=True, kw_only=True):
    """A known line with nothing for state or facts (snapshots, mode changes)."""

    kind: str


class HookEvent(Record, frozen=True, kw_only=True):
    """One event from agentbar's hook program (``<data>/events/<agent>/<session>.jsonl``): the
    agent itself saying what just happened. ``ts`` is when the hook ran; ``agent_id`` is set
    when a sub-agent's work raised it. Text fields are already cut to one short line each,
    except ``last_message`` (the turn's final answer, up to 1,000 characters)."""

    event: str  # the hook event name (``PreToolUse``, ``Stop``...; ``agent-turn-complete``)
    cwd: str | None = None
    transcript_path: str | None = None
    tool_name: str | None = None
    tool_summary: str | None = None  # the command, the file, the question
    notification_type: str | None = None
    message: str | None = None
    source: str | None = None  # SessionStart: startup, resume, clear, compact, fork
    reason: str | None = None  # SessionEnd
    last_message: str | None = None
    turn_id: str | None = None
    permission_mode: str | None = None
    error: str | None = None
    pid: int | None = None  # the agent's process, as the hook saw it


class Unknown(Record, frozen=True, kw_only=True):
    """A line whose shape no adapter knows; kept so replay can show it plainly."""

    kind: str


# Title ranks: the user's own name beats the agent's title beats an old summary beats the prompt
# beats a slash command (``/init``: a name until a prompt says more).
TITLE_RANK_COMMAND = -1
TITLE_RANK_PROMPT = 0
TITLE_RANK_SUMMARY = 1
TITLE_RANK_AGENT = 2
TITLE_RANK_USER = 3


def conversational(records: Iterable[Record]) -> bool:
    """Whether ``records`` hold anything but bookkeeping, titles and unknown lines: a file of
    those alone is no conversation (Claude 2.0.x's resume leaves one with just a summary line
    under a fresh id)."""
    return any(not isinstance(r, Bookkeeping | TitleSet | Unknown) for r in records)
