"""Session snapshots and changes as the channel carries them, and back (pure; any thread).

The channel carries epoch seconds (not the API's ISO text) and every field the front ends read,
so a remote session is the same value here as there, its key's ``host`` aside: the far side
speaks of its sessions as local ones, and the near side names the host when it reads them.
"""

from __future__ import annotations

from typing import Any

from ..decisions import PendingRequest, Question, RequestKind, Route, request_json
from ..model import (
    Agent,
    Process,
    SessionKey,
    SessionSnapshot,
    SessionState,
    Source,
    State,
    WaitingFor,
)
from ..records import Usage
from ..usage.ledger import UsageLine, counts


class WireError(ValueError):
    """A frame that does not say what it should (the far side is not a matching agentbar)."""


def _usage_from(raw: Any) -> Usage:
    if not isinstance(raw, list) or len(raw) != 5 or not all(type(n) is int for n in raw):
        raise WireError("usage is five integers")
    return Usage(
        input_tokens=raw[0],
        output_tokens=raw[1],
        cache_read_tokens=raw[2],
        cache_creation_tokens=raw[3],
        cache_creation_1h_tokens=raw[4],
    )


def snapshot_to_wire(snap: SessionSnapshot) -> dict[str, Any]:
    state = snap.state
    return {
        "agent": str(snap.key.agent),
        "id": snap.key.session_id,
        "project": snap.project,
        "title": snap.title,
        "state": str(state.state),
        "source": str(state.source),
        "detail": state.detail,
        "waiting_for": None if state.waiting_for is None else str(state.waiting_for),
        "state_since": snap.state_since,
        "started_at": snap.started_at,
        "last_activity": snap.last_activity,
        "model": snap.model,
        "usage": counts(snap.usage),
        "transcript": snap.transcript,
        "pid": None if snap.process is None else [snap.process.pid, snap.process.create_time],
        "task_id": snap.task_id,
        "threads": [thread for thread, _ in snap.threads],
        "ledger": [[ln.day, ln.model, counts(ln.usage), ln.cost] for ln in snap.ledger],
    }


def snapshot_from_wire(doc: Any, host: str) -> SessionSnapshot:
    """The snapshot ``doc`` describes, as a session of ``host``. Raises ``WireError``."""
    try:
        process = doc["pid"]
        waiting = doc["waiting_for"]
        return SessionSnapshot(
            key=SessionKey(Agent(_text(doc["agent"])), _text(doc["id"]), host),
            project=_maybe_text(doc["project"]),
            title=_maybe_text(doc["title"]),
            state=SessionState(
                state=State(doc["state"]),
                source=Source(doc["source"]),
                detail=_text(doc["detail"]),
                waiting_for=None if waiting is None else WaitingFor(waiting),
            ),
            state_since=_number(doc["state_since"]),
            started_at=_maybe_number(doc["started_at"]),
            last_activity=_maybe_number(doc["last_activity"]),
            model=_maybe_text(doc["model"]),
            usage=_usage_from(doc["usage"]),
            # The far side's path: shown, never opened here (replay goes through the channel).
            transcript=_maybe_text(doc["transcript"]),
            process=None
            if process is None
            else Process(pid=int(process[0]), create_time=float(process[1])),
            task_id=_maybe_text(doc["task_id"]),
            # Threads by id alone: their paths are the far side's, and stay there.
            threads=tuple((_text(t), "") for t in doc["threads"]),
            ledger=tuple(
                UsageLine(
                    day=_text(day),
                    model=_text(model),
                    usage=_usage_from(usage),
                    cost=_maybe_number(cost),
                )
                for day, model, usage, cost in doc["ledger"]
            ),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise WireError(f"a session the far side sent does not read: {exc}") from None


def request_from_wire(doc: Any, host: str, request_id: str) -> PendingRequest:
    """A far side's pending request (``request_json``) as one of ``host``'s, under the local
    book's ``request_id``."""
    try:
        return PendingRequest(
            request_id=request_id,
            agent=_text(doc["agent"]),
            session_id=_text(doc["session_id"]),
            kind=RequestKind(doc["kind"]),
            route=Route(doc["route"]),
            tool=_text(doc["tool"]),
            summary=_text(doc["summary"]),
            opened_at=_number(doc["opened_at"]),
            always_rule=_maybe_text(doc["always_rule"]),
            questions=tuple(
                Question(
                    _text(q["text"]),
                    _text(q["header"]),
                    tuple(_text(o) for o in q["options"]),
                    bool(q["multiple"]),
                )
                for q in doc["questions"]
            ),
            task_id=_maybe_text(doc["task_id"]),
            host=host,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"a request the far side sent does not read: {exc}") from None


request_to_wire = request_json


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise WireError(f"expected text, got {type(value).__name__}")
    return value


def _maybe_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WireError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _maybe_number(value: Any) -> float | None:
    return None if value is None else _number(value)
