"""agentbar's own hook events as a source: ``<data dir>/events/<agent>/<session id>.jsonl``
(engine thread).

``assets/hooks/agentbar_hook.py`` appends one line per agent event there (agent-formats.md 2,
4). The agent and the session come from the path, never from a line; each line becomes one
``HookEvent`` record. One source per agent, so the engine's per-agent plumbing stays as it is;
it owns no processes (``finds_processes = False``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model import Agent
from ..records import HookEvent, Record
from .base import (
    MalformedLine,
    Owner,
    ProcessInfo,
    RegistryEntry,
    StreamKind,
    StreamSpec,
    WatchRoot,
    load_json_object,
    nonempty_str,
    parse_timestamp,
    small_int,
)

EVENTS_DIR = "events"
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def events_dir(data_dir: Path, agent: Agent) -> Path:
    return data_dir / EVENTS_DIR / str(agent)


def is_session_file_name(stem: str) -> bool:
    """The names the hook program writes (it refuses any other session id)."""
    return 0 < len(stem) <= 128 and stem[0] not in ".-" and all(c in _NAME_CHARS for c in stem)


class HookEventsSource:
    """One agent's hook events in agentbar's data dir."""

    finds_processes = False

    def __init__(self, data_dir: Path, agent: Agent) -> None:
        self.agent = agent
        self.folder = events_dir(data_dir, agent)

    def watch_roots(self) -> list[WatchRoot]:
        return [WatchRoot(self.folder, recursive=False)]

    def classify(self, path: Path) -> StreamSpec | None:
        if path.parent != self.folder or path.suffix != ".jsonl":
            return None
        stem = path.name[: -len(".jsonl")]
        if not is_session_file_name(stem):
            return None
        return StreamSpec(self.agent, StreamKind.HOOKS, path, session_hint=stem)

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> HookEventParser:
        return HookEventParser(spec)

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        return None

    def is_client_process(self, proc: ProcessInfo) -> bool:
        return False

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        return None

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        return proc.cwd


class HookEventParser:
    """Lines to ``HookEvent`` records; stateless (the session is the file's name)."""

    def __init__(self, spec: StreamSpec) -> None:
        self._owner = None if spec.session_hint is None else Owner(spec.session_hint)

    @property
    def owner(self) -> Owner | None:
        return self._owner

    def parse(self, line: bytes) -> list[Record]:
        obj = load_json_object(line)
        event = obj.get("event")
        ts = parse_timestamp(obj.get("ts"))
        if not isinstance(event, str) or not event:
            raise MalformedLine("a hook line without an event name")
        if ts is None:
            raise MalformedLine("a hook line without a time")
        pid = obj.get("pid")
        return [
            HookEvent(
                ts=ts,
                agent_id=nonempty_str(obj.get("agent_id")),
                event=event,
                cwd=nonempty_str(obj.get("cwd")),
                transcript_path=nonempty_str(obj.get("transcript_path")),
                tool_name=nonempty_str(obj.get("tool_name")),
                tool_summary=nonempty_str(obj.get("tool_summary")),
                notification_type=nonempty_str(obj.get("notification_type")),
                message=nonempty_str(obj.get("message")),
                source=nonempty_str(obj.get("source")),
                reason=nonempty_str(obj.get("reason")),
                last_message=nonempty_str(obj.get("last_assistant_message")),
                turn_id=nonempty_str(obj.get("turn_id")),
                permission_mode=nonempty_str(obj.get("permission_mode")),
                error=nonempty_str(obj.get("error")),
                pid=small_int(pid),
            )
        ]

    def parse_oversized(self, prefix: bytes, length: int) -> list[Record]:
        return []  # the hook program never writes one: this is not its line

    def checkpoint(self) -> dict[str, Any]:
        return {}
