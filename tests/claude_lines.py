"""Builders for Claude Code transcript lines and registry files, shaped like 2.1.x output
(agent-formats.md 1.3-1.10, real-cli-notes.md); options produce the 1.0.x and 2.0.x variants."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path
from typing import Any

import orjson

T0 = dt.datetime(2026, 11, 29, 10, 0, 0, tzinfo=dt.UTC).timestamp()
_IDS = itertools.count(1)  # shared by every builder: ids stay unique across files, as real ones


def iso(epoch: float) -> str:
    return (
        dt.datetime.fromtimestamp(epoch, tz=dt.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def dumps(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj)


class ClaudeTranscript:
    """Writes lines the way one Claude session does; each call returns the line's dict and
    advances the clock by ``step`` seconds."""

    def __init__(
        self,
        session_id: str = "11111111-2222-3333-4444-555555555555",
        cwd: str = "/work/demo",
        *,
        version: str = "2.1.197",
        start: float = T0,
        step: float = 1.0,
        sidechain: bool = False,
        agent_id: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.version = version
        self.now = start
        self.step = step
        self.sidechain = sidechain
        self.agent_id = agent_id
        self._parent: str | None = None

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.now += self.step
        uuid = f"00000000-0000-4000-8000-{next(_IDS):012d}"
        line: dict[str, Any] = {
            "parentUuid": self._parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": iso(self.now),
        }
        if self.agent_id is not None:
            line["agentId"] = self.agent_id
        line.update(extra)
        self._parent = uuid
        return line

    def prompt(self, text: str, **extra: Any) -> dict[str, Any]:
        return self._base(
            "user", message={"role": "user", "content": text}, permissionMode="default", **extra
        )

    def meta(self, text: str) -> dict[str, Any]:
        return self._base("user", message={"role": "user", "content": text}, isMeta=True)

    def assistant(
        self,
        blocks: list[dict[str, Any]],
        *,
        stop_reason: str | None = None,
        message_id: str | None = None,
        usage: dict[str, int] | None = None,
        model: str = "claude-sonnet-4-5",
        **extra: Any,
    ) -> dict[str, Any]:
        message_id = message_id or f"msg_{next(_IDS)}"
        return self._base(
            "assistant",
            requestId=f"req_{message_id}",
            message={
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": usage
                or {
                    "input_tokens": 10,
                    "output_tokens": 20,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 100,
                },
            },
            **extra,
        )

    def text(self, text: str, **kw: Any) -> dict[str, Any]:
        return self.assistant([{"type": "text", "text": text}], **kw)

    def thinking(self, text: str, **kw: Any) -> dict[str, Any]:
        return self.assistant([{"type": "thinking", "thinking": text, "signature": "sig"}], **kw)

    def tool_use(
        self, name: str, tool_input: dict[str, Any], call_id: str, **kw: Any
    ) -> dict[str, Any]:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
        return self.assistant([block], **kw)

    def bash(self, command: str, call_id: str = "toolu_01", **kw: Any) -> dict[str, Any]:
        return self.tool_use("Bash", {"command": command, "description": "run it"}, call_id, **kw)

    def tool_result(
        self,
        call_id: str = "toolu_01",
        content: str = "ok",
        *,
        is_error: bool = False,
        denied: bool = False,
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if denied:
            content = (
                "The user doesn't want to proceed with this tool use. The tool use was rejected."
            )
            is_error = True
            extra["toolUseResult"] = "User rejected tool use"
        else:
            extra["toolUseResult"] = {"stdout": content, "stderr": "", "interrupted": False}
        block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
        if is_error:
            block["is_error"] = True
        return self._base("user", message={"role": "user", "content": [block]}, **extra)

    def interrupt(self, *, for_tool: bool = False) -> dict[str, Any]:
        text = (
            "[Request interrupted by user for tool use]"
            if for_tool
            else "[Request interrupted by user]"
        )
        return self._base(
            "user", message={"role": "user", "content": [{"type": "text", "text": text}]}
        )

    def turn_duration(self, pending_agents: int | None = None) -> dict[str, Any]:
        extra: dict[str, Any] = {"subtype": "turn_duration", "durationMs": 7000, "messageCount": 4}
        if pending_agents is not None:
            extra["pendingBackgroundAgentCount"] = pending_agents
        return self._base("system", isMeta=False, **extra)

    def api_error(self, message: str, attempt: int, most: int) -> dict[str, Any]:
        return self._base(
            "system",
            subtype="api_error",
            level="error",
            error={"error": {"message": message}},
            retryAttempt=attempt,
            maxRetries=most,
            retryInMs=1000,
        )

    def synthetic_error(self, message: str) -> dict[str, Any]:
        return self.assistant(
            [{"type": "text", "text": message}],
            model="<synthetic>",
            isApiErrorMessage=True,
            error="unknown",
        )

    def progress(self, kind: str = "bash_progress") -> dict[str, Any]:
        return self._base("progress", data={"type": kind}, toolUseID="toolu_01")

    def bookkeeping(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.now += self.step
        return {"type": kind, **fields}


def registry(
    pid: int,
    session_id: str,
    *,
    status: str,
    waiting_for: str | None = None,
    cwd: str = "/work/demo",
    started_at: float = T0,
    updated_at: float | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "pid": pid,
        "sessionId": session_id,
        "cwd": cwd,
        "startedAt": int(started_at * 1000),
        "procStart": "12345",
        "version": "2.1.197",
        "kind": "interactive",
        "entrypoint": "cli",
        "name": "demo",
        "status": status,
        "updatedAt": int((updated_at or started_at) * 1000),
        "statusUpdatedAt": int((updated_at or started_at) * 1000),
    }
    if waiting_for is not None:
        entry["waitingFor"] = waiting_for
    return entry


def write_lines(path: Path, lines: list[dict[str, Any]], *, mode: str = "ab") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode) as fh:
        for line in lines:
            fh.write(dumps(line) + b"\n")
