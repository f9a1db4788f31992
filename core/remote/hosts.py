"""How each configured remote host is doing, as the front ends show it (values, any thread)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..model import iso


class HostState(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    UNREACHABLE = "unreachable"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostStatus:
    """One remote as last seen: ``since`` is when it entered ``state`` (epoch seconds);
    ``detail`` says why it is unreachable (in the person's words: "asks for a password",
    "connection dropped"), ``sessions`` how many of its sessions are known."""

    name: str
    state: HostState
    since: float
    detail: str = ""
    sessions: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": str(self.state),
            "since": iso(self.since),
            "detail": self.detail,
            "sessions": self.sessions,
        }
