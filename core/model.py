"""Session-level values the engine publishes: state, snapshots, changes (values, any thread)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .records import Usage
from .usage.ledger import UsageLine, total_cost


class Agent(str):
    """An agent's identity as every program sees it (``"claude"``, ``"codex"``): the wire name
    in JSON, the API, the index and the hook events folder. Each agent's kit defines its own
    (``agentbar.core.agents``); nothing here lists them."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Agent({str.__repr__(self)})"


class State(StrEnum):
    RUNNING = "running"
    INPUT_REQUIRED = "input_required"
    DONE = "done"
    FAILED = "failed"
    ENDED = "ended"


class WaitingFor(StrEnum):
    APPROVAL = "approval"
    QUESTION = "question"


class Source(StrEnum):
    """The signal that decided a state, strongest first."""

    HOOK = "hook"
    REGISTRY = "registry"
    PTY = "pty"
    TRANSCRIPT = "transcript"
    PROCESS = "process"


LOCAL_HOST = "local"


@dataclass(frozen=True, slots=True)
class SessionKey:
    """A session's identity: its agent and id, and the machine it runs on (``LOCAL_HOST`` for
    this one, a configured remote's name otherwise: ids are only unique per host)."""

    agent: Agent
    session_id: str
    host: str = LOCAL_HOST

    def __str__(self) -> str:
        local = f"{self.agent}:{self.session_id}"
        return local if self.host == LOCAL_HOST else f"{self.host}/{local}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    state: State
    source: Source
    detail: str = ""
    waiting_for: WaitingFor | None = None
    # A state whose detail is still expected from a slower signal (the registry says "waiting"
    # before the transcript names the tool): the engine holds it back briefly so the one event
    # it emits is complete.
    provisional: bool = False

    def same_as(self, other: SessionState | None) -> bool:
        """Equal for reporting purposes: what a person would see as no change."""
        return (
            other is not None
            and self.state == other.state
            and self.waiting_for == other.waiting_for
            and self.detail == other.detail
        )

    def same_transition(self, other: SessionState | None) -> bool:
        return (
            other is not None
            and self.state == other.state
            and (self.waiting_for == other.waiting_for)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Process:
    pid: int
    create_time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSnapshot:
    """Everything known about one session at one moment: the row of ``agentbar status``."""

    key: SessionKey
    project: str | None
    title: str | None
    state: SessionState
    state_since: float
    started_at: float | None
    last_activity: float | None
    model: str | None
    usage: Usage
    transcript: str | None
    process: Process | None
    task_id: str | None = None
    # Sub-agent threads with files of their own: (agent id, path), for replay. Paths the engine
    # found by walking the agents' folders, never taken from a request.
    threads: tuple[tuple[str, str], ...] = ()
    # The session's usage per (local day, model), priced under the shipped table.
    ledger: tuple[UsageLine, ...] = ()

    @property
    def cost(self) -> float | None:
        """USD; None when a model that spent tokens has no price (unknown, never zero)."""
        return total_cost(self.ledger)

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.key.host,
            "agent": str(self.key.agent),
            "session_id": self.key.session_id,
            "project": self.project,
            "title": self.title,
            "state": str(self.state.state),
            "waiting_for": None if self.state.waiting_for is None else str(self.state.waiting_for),
            "detail": self.state.detail,
            "last_activity": iso(self.last_activity),
            "transcript": self.transcript,
            "pid": None if self.process is None else self.process.pid,
            "task_id": self.task_id,
            "source": str(self.state.source),
            "started_at": iso(self.started_at),
            "state_since": iso(self.state_since),
            "model": self.model,
            "usage": self.usage.to_json(),
            # What a person means by "tokens": input + output, cache reads and writes apart.
            "headline_tokens": self.usage.input_tokens + self.usage.output_tokens,
            "cost_usd": self.cost,
            "usage_by_model": usage_by_model(self.ledger),
        }


def usage_by_model(ledger: tuple[UsageLine, ...]) -> list[dict[str, Any]]:
    """The ledger summed over days, one entry per model (as JSON)."""
    merged: dict[str, tuple[Usage, float | None]] = {}
    for line in ledger:
        usage, cost = merged.get(line.model, (Usage(), 0.0))
        merged[line.model] = (
            usage + line.usage,
            None if cost is None or line.cost is None else cost + line.cost,
        )
    return [
        {"model": model or None, **usage.to_json(), "cost_usd": cost}
        for model, (usage, cost) in sorted(merged.items())
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChange:
    """One line of ``agentbar watch``: a session moved from one state to another."""

    ts: float
    snapshot: SessionSnapshot
    prev: SessionState | None

    def to_json(self) -> dict[str, Any]:
        snap = self.snapshot
        return {
            "ts": iso(self.ts),
            "host": snap.key.host,
            "agent": str(snap.key.agent),
            "session_id": snap.key.session_id,
            "project": snap.project,
            "state": str(snap.state.state),
            "prev_state": None if self.prev is None else str(self.prev.state),
            "waiting_for": None if snap.state.waiting_for is None else str(snap.state.waiting_for),
            "detail": snap.state.detail,
            "source": str(snap.state.source),
            "title": snap.title,
            "pid": None if snap.process is None else snap.process.pid,
        }


def iso(epoch: float | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC with milliseconds, the agents' own timestamp style."""
    if epoch is None:
        return None
    try:
        moment = _dt.datetime.fromtimestamp(epoch, tz=_dt.UTC)
    except (OverflowError, OSError, ValueError):  # no moment the platform can represent
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
