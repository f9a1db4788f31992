"""Session snapshots and state changes as the engine publishes them, for unit tests of what
consumes them (the tray, the launcher's hand-off and project lists)."""

from __future__ import annotations

from agentbar.core.agents.base import display_names
from agentbar.core.agents.claude import AGENT as CLAUDE
from agentbar.core.agents.registry import KITS
from agentbar.core.model import (
    Agent,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
    StateChange,
    WaitingFor,
)
from agentbar.core.records import Usage

T0 = 1_800_000_000.0
# What the tray calls each agent, as the real tray is given it (the kits' display names).
NAMES = display_names(KITS)
LAUNCHABLE = tuple(kit.agent for kit in KITS if kit.launch is not None)


def snap(
    session_id: str,
    state: State,
    *,
    agent: Agent = CLAUDE,
    project: str | None = "/work/api",
    title: str | None = "Fix the flaky test",
    detail: str = "",
    waiting_for: WaitingFor | None = None,
    since: float = T0,
) -> SessionSnapshot:
    return SessionSnapshot(
        key=SessionKey(agent, session_id),
        project=project,
        title=title,
        state=SessionState(
            state=state, source=Source.TRANSCRIPT, detail=detail, waiting_for=waiting_for
        ),
        state_since=since,
        started_at=T0 - 600,
        last_activity=since,
        model=None,
        usage=Usage(),
        transcript=None,
        process=None,
    )


def approval(session_id: str, detail: str = "Bash: rm -rf build", **kw: object) -> SessionSnapshot:
    return snap(
        session_id, State.INPUT_REQUIRED, detail=detail, waiting_for=WaitingFor.APPROVAL, **kw
    )


def question(session_id: str, detail: str = "Which database?", **kw: object) -> SessionSnapshot:
    return snap(
        session_id, State.INPUT_REQUIRED, detail=detail, waiting_for=WaitingFor.QUESTION, **kw
    )


def change(s: SessionSnapshot, prev: State | None = State.RUNNING) -> StateChange:
    before = None if prev is None else SessionState(state=prev, source=Source.TRANSCRIPT)
    return StateChange(ts=s.state_since, snapshot=s, prev=before)
