"""What every route of the loopback server shares: the context it serves (engine, replay,
search, tasks, windows) and the lookups of a session a request names (pure helpers; called on
the server's loop thread).

The session routes (``app``) and the task routes (``task_routes``) both import this module;
neither imports the other's internals.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from .. import jsonsafe
from ..agents.base import AgentKit, HookDecisions, ToolVocabulary
from ..decisions import DecisionBook
from ..engine_messages import EngineStats, IndexProgress
from ..errors import Fault
from ..launch.manager import TaskManager
from ..limits import LimitWindow
from ..model import LOCAL_HOST, Agent, SessionKey, SessionSnapshot, StateChange
from ..remote.hub import Hub
from ..remote.remotes import NAME
from ..replay.pages import NotFound, Replay
from ..search import Searcher
from .replies import BadRequest
from .security import Guard
from .windows import WindowLink

ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class Sessions(Protocol):
    """What the server needs from the engine (any thread)."""

    ready: threading.Event  # set once the engine has caught up with what is on disk

    def sessions(self) -> list[SessionSnapshot]: ...

    def subscribe(self, callback: Callable[[StateChange], None]) -> Callable[[], None]: ...

    def stats(self) -> EngineStats: ...

    def limits(self) -> tuple[LimitWindow, ...]: ...

    def limits_heard(self) -> frozenset[str]: ...

    def faults(self) -> tuple[Fault, ...]: ...

    def progress(self) -> IndexProgress: ...

    def subscribe_progress(
        self, callback: Callable[[IndexProgress], None]
    ) -> Callable[[], None]: ...


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One agent this agentbar knows, as the window lists it (``GET /api/agents``)."""

    agent: Agent
    name: str  # what a person calls it ("Claude Code")
    launch: bool  # agentbar can start it (new, resume, fork)
    replay: bool  # its sessions can be read in the window

    @classmethod
    def of(cls, kit: AgentKit) -> AgentEntry:
        return cls(kit.agent, kit.display_name, kit.launch is not None, kit.replay is not None)

    def to_json(self) -> dict[str, object]:
        return {"agent": str(self.agent), "name": self.name, "launch": self.launch,
                "replay": self.replay}  # fmt: skip


@dataclass
class EncodedSessions:
    """Each session's JSON for the events' first message, encoded once per snapshot: snapshots
    are frozen and the engine hands back the same object while a session is unchanged, so a
    client that connects again gets the encoded rows joined, not rebuilt (loop thread only)."""

    encode: Callable[[SessionSnapshot], bytes]
    rows: dict[SessionKey, tuple[SessionSnapshot, bytes]] = field(default_factory=dict)

    def rows_of(self, snapshots: list[SessionSnapshot]) -> dict[SessionKey, bytes]:
        """Each of ``snapshots`` encoded (anew only when changed); forgets the others."""
        fresh: dict[SessionKey, tuple[SessionSnapshot, bytes]] = {}
        for snap in snapshots:
            held = self.rows.get(snap.key)
            fresh[snap.key] = held if held is not None and held[0] is snap else (
                snap, self.encode(snap))  # fmt: skip
        self.rows = fresh
        return {key: row for key, (_, row) in fresh.items()}


def json_array(rows: dict[SessionKey, bytes], snapshots: list[SessionSnapshot]) -> bytes:
    """The JSON array of ``snapshots``' encoded rows, in their order."""
    return b"[" + b",".join(rows[snap.key] for snap in snapshots) + b"]"


@dataclass
class Context:
    engine: Sessions
    replay: Replay
    searcher: Searcher | None
    guard: Guard
    web_dir: Path
    clients: set[asyncio.Queue[bytes | None]] = field(default_factory=set)
    agents: tuple[AgentEntry, ...] = ()  # the agents this agentbar knows (its kits')
    tools: Mapping[Agent, ToolVocabulary] = field(default_factory=dict)  # for hand-offs
    tasks: TaskManager | None = None  # launched agents, when this process owns them
    quit: Callable[[str], None] | None = None  # ask the process to quit ("keep"/"stop" tasks)
    window: WindowLink = field(default_factory=WindowLink)  # what the windows show
    decisions: DecisionBook | None = None  # the requests waiting on the person (and answers)
    # The agents whose hooks can hold a request, and how each reads and answers one.
    deciders: Mapping[Agent, HookDecisions] = field(default_factory=dict)
    hub: Hub | None = None  # the remote hosts, when settings.toml configures any
    # The events' first message's rows, as SESSION and as the board's slimmer BOARD_SESSION.
    encoded: EncodedSessions = field(
        default_factory=lambda: EncodedSessions(lambda s: jsonsafe.dumps(session_json(s, None)))
    )
    encoded_board: EncodedSessions = field(
        default_factory=lambda: EncodedSessions(lambda s: jsonsafe.dumps(board_json(s)))
    )


CONTEXT = web.AppKey("context", Context)


def context_of(request: web.Request) -> Context:
    return request.app[CONTEXT]


def agent_param(request: web.Request) -> Agent | None:
    raw = request.query.get("agent")
    if not raw:
        return None
    known = [entry.agent for entry in context_of(request).agents]
    if raw not in known:
        raise BadRequest(f"agent must be one of {', '.join(known)}")
    return Agent(raw)


def find_session(request: web.Request) -> SessionSnapshot:
    """The session a request names by id (``?agent=`` when both agents have that id,
    ``?host=`` for a remote host's: without it, this machine's comes first)."""
    session_id = request.match_info["session_id"]
    if not ID.match(session_id):
        raise NotFound("no such session")
    agent = agent_param(request)
    host = request.query.get("host") or None
    if host is not None and host != LOCAL_HOST and not NAME.match(host):
        raise NotFound("no such session")
    found = [
        s
        for s in context_of(request).engine.sessions()
        if s.key.session_id == session_id
        and (agent is None or s.key.agent == agent)
        and (host is None or s.key.host == host)
    ]
    if host is None and len(found) > 1:  # ids are per host: without ?host=, this machine's
        found = [s for s in found if s.key.host == LOCAL_HOST] or found
    if not found:
        raise NotFound("no such session")
    if len({s.key.host for s in found}) > 1:
        raise BadRequest("hosts have sessions with this id: add ?host=")
    if len(found) > 1:
        raise BadRequest("both agents have a session with this id: add ?agent=")
    return found[0]


def session_json(
    snap: SessionSnapshot, counts: dict[SessionKey, dict[str, int]] | None
) -> dict[str, Any]:
    doc = snap.to_json()
    doc["threads"] = [thread for thread, _ in snap.threads]
    doc["counts"] = None if counts is None else counts.get(snap.key, {})
    return doc


# What the board's cards, filters and counts read of a session (docs/api.md BOARD_SESSION): the
# events' first message carries only these with ``?view=board`` (the rest, half of a SESSION's
# bytes, the page would parse 10,000 times and never read).
BOARD_FIELDS = (
    "host", "agent", "session_id", "project", "title", "state", "waiting_for", "detail",
    "last_activity", "source", "usage", "cost_usd", "task_id",
)  # fmt: skip


def board_json(snap: SessionSnapshot) -> dict[str, Any]:
    doc = snap.to_json()
    return {name: doc[name] for name in BOARD_FIELDS}
