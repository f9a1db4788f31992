"""The toy agent's files and processes, and its line parser (engine thread).

``<home>/chats/<session id>.jsonl``, one object a line:

    {"t": 1800000000.0, "cwd": "/work/api"}        the session starts in a folder
    {"t": ..., "user": "fix the tests"}             a prompt: a turn starts
    {"t": ..., "says": "Done.", "final": true}      answer text (final: the turn's last)
    {"t": ..., "asks": "Which database?"}           a question to the person
    {"t": ..., "answer": "Postgres"}                the person's answer to it
    {"t": ..., "done": true}                        the turn is over
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentbar.core.model import Agent
from agentbar.core.records import (
    Asks,
    AssistantText,
    Prompt,
    Record,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnded,
    Unknown,
)
from agentbar.core.sources.base import (
    Owner,
    ProcessInfo,
    RegistryEntry,
    StreamKind,
    StreamSpec,
    WatchRoot,
    load_json_object,
    nonempty_str,
    parse_timestamp,
)

AGENT = Agent("toy")
MARKER = "--toy-agent"


class ToySource:
    agent = AGENT
    finds_processes = True

    def __init__(self, home: Path) -> None:
        self.chats = home / "chats"

    def watch_roots(self) -> list[WatchRoot]:
        return [WatchRoot(self.chats, recursive=False)]

    def classify(self, path: Path) -> StreamSpec | None:
        if path.parent != self.chats or path.suffix != ".jsonl":
            return None
        return StreamSpec(AGENT, StreamKind.TRANSCRIPT, path, session_hint=path.stem)

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> ToyParser:
        return ToyParser(spec, checkpoint)

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        return None  # no live registry

    def is_client_process(self, proc: ProcessInfo) -> bool:
        return MARKER in proc.cmdline

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        args = list(proc.cmdline)
        if "--session" in args[:-1]:
            return args[args.index("--session") + 1]
        return None

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        return proc.cwd


class ToyParser:
    def __init__(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> None:
        self.spec = spec
        self.session_id = spec.session_hint or spec.path.stem
        self.questions = int((checkpoint or {}).get("questions", 0))

    @property
    def owner(self) -> Owner | None:
        return Owner(self.session_id)

    def parse(self, line: bytes) -> list[Record]:
        data = load_json_object(line)
        ts = parse_timestamp(data.get("t"))
        if (cwd := nonempty_str(data.get("cwd"))) is not None:
            return [SessionMeta(ts=ts, session_id=self.session_id, cwd=cwd)]
        if (text := nonempty_str(data.get("user"))) is not None:
            return [Prompt(ts=ts, text=text)]
        if (text := nonempty_str(data.get("says"))) is not None:
            return [AssistantText(ts=ts, text=text, final=data.get("final") is True)]
        if (text := nonempty_str(data.get("asks"))) is not None:
            self.questions += 1
            call = f"q{self.questions}"
            return [ToolCall(ts=ts, call_id=call, name="ask", summary=text, asks=Asks.QUESTION)]
        if "answer" in data:
            return [ToolResult(ts=ts, call_id=f"q{self.questions}")]
        if data.get("done") is True:
            return [TurnEnded(ts=ts)]
        return [Unknown(ts=ts, kind=",".join(sorted(data)) or "empty")]

    def parse_oversized(self, prefix: bytes, length: int) -> list[Record]:
        return [Unknown(kind="oversized")]

    def checkpoint(self) -> dict[str, Any]:
        return {"questions": self.questions}
