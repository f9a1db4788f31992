"""opencode's stored rows as plain values, whichever layout they came from (values; any thread).

opencode keeps a session as three kinds of object: the session itself, its messages (``role``
user or assistant, ``time.completed``, ``finish``, ``error``, token counts) and their parts
(text, reasoning, tool calls with ``state.status``, step markers). Releases from 1.2 keep them
as rows of one SQLite database (``session``, ``message``, ``part``; the message and part bodies
are a ``data`` JSON column); earlier ones as one JSON file per object under
``storage/session|message|part/``. Both readers (``database.py``, ``storage.py``) produce these
values, and ``translate.py`` turns them into agentbar's records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    directory: str | None
    title: str | None
    parent_id: str | None
    version: str | None
    created_ms: int | None
    updated_ms: int | None


@dataclass(frozen=True, slots=True)
class MessageRow:
    id: str
    session_id: str
    data: Json  # role, time.created/completed, finish, error, tokens, modelID...


@dataclass(frozen=True, slots=True)
class PartRow:
    id: str
    message_id: str
    session_id: str
    data: Json  # type, text, tool, callID, state...


@dataclass(slots=True)
class Rows:
    """What one read found changed (or, on the first read, everything)."""

    sessions: list[SessionRow] = field(default_factory=list)
    messages: list[MessageRow] = field(default_factory=list)
    parts: list[PartRow] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.sessions or self.messages or self.parts)
