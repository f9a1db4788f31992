"""How each configured remote host is doing, as the front ends show it (values, any thread)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..engine_messages import IndexProgress
from ..limits import HostHeard
from ..model import iso
from ..progress_text import progress_json, reading_line


class HostState(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    UNREACHABLE = "unreachable"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostStatus:
    """One remote as last seen: ``since`` is when it entered ``state`` (epoch seconds);
    ``detail`` says why it is unreachable (in the person's words: "asks for a password",
    "connection dropped"), ``sessions`` how many of its sessions are known; ``progress`` how
    far its agentbar's first reading has come, while connected (None: not told, or an older
    agentbar that does not tell it); ``heard`` which of its agents' limit sources spoke there,
    kept while it is away as its windows are (None: not told, or an older agentbar)."""

    name: str
    state: HostState
    since: float
    detail: str = ""
    sessions: int = 0
    progress: IndexProgress | None = None
    heard: frozenset[str] | None = None

    def limits_heard(self) -> HostHeard | None:
        """What its notes are made of (``limits_text.host_notes``); stale while not connected;
        None when its agentbar did not tell."""
        if self.heard is None:
            return None
        return HostHeard(self.name, self.heard, stale=self.state is not HostState.CONNECTED)

    def reading(self) -> str | None:
        """Its agentbar's first reading while it goes on and the host is connected ("devbox:
        Reading history: 42 % (1.3 of 3.1 GB)"); None once done, while not connected, or from
        an agentbar that does not tell it."""
        progress = self.progress
        if self.state is not HostState.CONNECTED or progress is None:
            return None
        line = reading_line(progress)
        return None if line is None else f"{self.name}: {line}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": str(self.state),
            "since": iso(self.since),
            "detail": self.detail,
            "sessions": self.sessions,
            "progress": None if self.progress is None else progress_json(self.progress, self.name),
        }


def hosts_heard(hosts: Iterable[HostStatus]) -> tuple[HostHeard, ...]:
    """The hosts' notes' makings, of those whose agentbar told them."""
    return tuple(heard for heard in (host.limits_heard() for host in hosts) if heard is not None)
