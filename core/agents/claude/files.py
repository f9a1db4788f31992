"""Claude Code adapter: where its files live, its live registry, its processes (engine thread).

Layouts (agent-formats.md 1.1, 1.2, 1.9):
- ``projects/<dir>/<session uuid>.jsonl``: a session's transcript (1.0.x writes sub-agent lines
  inline with ``isSidechain: true``);
- ``projects/<dir>/<other name>.jsonl``: other tools' transcripts; their lines' ``sessionId``
  names the session;
- ``projects/<dir>/agent-<id>.jsonl`` (2.0.x): a sub-agent; its lines name the parent session;
- ``projects/<dir>/<session uuid>/subagents/**/agent-<id>.jsonl`` (2.1.x): a sub-agent;
- ``sessions/<pid>.json``: the live registry, rewritten on every status change.
Transcript lines are read by ``claude_transcript.ClaudeTranscriptParser``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...model import Agent
from ...sources.base import (
    JS_RUNTIMES,
    MalformedLine,
    ProcessInfo,
    RegistryEntry,
    StreamKind,
    StreamSpec,
    WatchRoot,
    is_uuid,
    load_json_object,
    nonempty_str,
    parse_timestamp,
    program_name,
    small_int,
)
from .transcript import ClaudeTranscriptParser

log = logging.getLogger(__name__)

AGENT = Agent("claude")

_CLIENT_EXCLUDED_SUBCOMMANDS = frozenset(
    {
        "mcp",
        "config",
        "update",
        "upgrade",
        "doctor",
        "install",
        "setup-token",
        "migrate-installer",
        "plugin",
        "agents",
        "auth",
    }
)
_OPTIONS_WITH_VALUE = frozenset(
    {
        "-r",
        "--resume",
        "--session-id",
        "--model",
        "--settings",
        "--setting-sources",
        "--permission-mode",
        "--output-format",
        "--input-format",
        "--mcp-config",
        "--add-dir",
        "--allowedTools",
        "--disallowedTools",
        "--append-system-prompt",
        "--system-prompt",
        "-n",
        "--name",
        "--agent",
        "--plugin-dir",
        "--fallback-model",
    }
)


def default_claude_roots(env: Mapping[str, str]) -> list[Path]:
    """Claude's config roots: ``CLAUDE_CONFIG_DIR`` alone when set, else ``~/.claude`` and the
    XDG location a few 2025 builds used."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return [Path(configured).expanduser()]
    home = Path(env.get("HOME") or Path.home())
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "claude"
    return [home / ".claude", xdg]


class ClaudeSource:
    """One Claude config root."""

    agent = AGENT
    finds_processes = True
    # Its parsers keep nothing their checkpoint leaves out: another process may read its
    # files and hand back the checkpoint (``core/cold_read.py``).
    checkpoint_is_state = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self.projects = root / "projects"
        self.sessions = root / "sessions"

    def watch_roots(self) -> list[WatchRoot]:
        return [WatchRoot(self.projects, recursive=True), WatchRoot(self.sessions, recursive=False)]

    def classify(self, path: Path) -> StreamSpec | None:
        name = path.name
        if path.parent == self.sessions:
            stem, dot, ext = name.partition(".")
            if ext == "json" and dot and stem.isdigit():
                return StreamSpec(AGENT, StreamKind.REGISTRY, path)
            return None
        if not name.endswith(".jsonl"):
            return None
        try:
            parts = path.relative_to(self.projects).parts
        except ValueError:
            return None
        stem = name[: -len(".jsonl")]
        if len(parts) == 2:
            if is_uuid(stem):
                return StreamSpec(AGENT, StreamKind.TRANSCRIPT, path, session_hint=stem)
            if stem.startswith("agent-"):
                return StreamSpec(
                    AGENT, StreamKind.SUBAGENT, path, agent_id_hint=stem[len("agent-") :]
                )
            # Another tool's file in Claude's layout: a session when its lines name one (else
            # counted as a transcript naming no session, ``EngineStats.ignored_files``).
            return StreamSpec(AGENT, StreamKind.TRANSCRIPT, path)
        if len(parts) >= 4 and parts[2] == "subagents" and stem.startswith("agent-"):
            parent = parts[1]
            if is_uuid(parent):
                return StreamSpec(
                    AGENT,
                    StreamKind.SUBAGENT,
                    path,
                    session_hint=parent,
                    agent_id_hint=stem[len("agent-") :],
                )
        return None

    def parser(self, spec: StreamSpec, checkpoint: dict[str, Any] | None) -> ClaudeTranscriptParser:
        return ClaudeTranscriptParser(spec, checkpoint)

    def parse_registry(self, data: bytes) -> RegistryEntry | None:
        try:
            obj = load_json_object(data)
        except MalformedLine:
            return None
        pid = small_int(obj.get("pid"))
        session_id = obj.get("sessionId")
        proc_start = obj.get("procStart")
        if pid is None or not isinstance(session_id, str) or not session_id:
            return None
        return RegistryEntry(
            pid=pid,
            session_id=session_id,
            cwd=nonempty_str(obj.get("cwd")),
            status=nonempty_str(obj.get("status")),
            waiting_for=nonempty_str(obj.get("waitingFor")),
            updated_at=parse_timestamp(obj.get("statusUpdatedAt") or obj.get("updatedAt")),
            started_at=parse_timestamp(obj.get("startedAt")),
            # A string or a number: a nested value's str() could recurse past Python's limit.
            proc_start=str(proc_start) if isinstance(proc_start, str | int | float) else None,
            version=nonempty_str(obj.get("version")),
            name=nonempty_str(obj.get("name")),
        )

    def is_client_process(self, proc: ProcessInfo) -> bool:
        args = _program_args(proc, is_claude_program)
        if args is None:
            return False
        sub = _first_positional(args)
        return sub is None or sub not in _CLIENT_EXCLUDED_SUBCOMMANDS

    def process_session_hint(self, proc: ProcessInfo) -> str | None:
        args = _program_args(proc, is_claude_program) or ()
        resumed: str | None = None
        for flag, value in itertools.pairwise(args):
            if flag == "--session-id" and is_uuid(value):
                return value  # a fixed id wins, also for a fork
            if flag in ("-r", "--resume") and is_uuid(value):
                resumed = value
        if resumed and "--fork-session" in args:
            return None  # the fork gets a new id
        return resumed

    def process_cwd(self, proc: ProcessInfo) -> str | None:
        return proc.cwd


def is_claude_program(argv0: str, name: str) -> bool:
    return "claude" in (program_name(argv0), program_name(name))


def _program_args(proc: ProcessInfo, matches: Any) -> tuple[str, ...] | None:
    """The arguments after the agent's program in ``proc.cmdline`` (through a node wrapper
    such as ``node .../@anthropic-ai/claude-code/cli.js``), or None when it is not the agent."""
    cmd = proc.cmdline
    if not cmd:
        return None
    if matches(cmd[0], proc.name):
        return cmd[1:]
    if program_name(cmd[0]) in JS_RUNTIMES:
        for i, arg in enumerate(cmd[1:], start=1):
            if arg.startswith("-"):
                continue
            norm = arg.replace("\\", "/")
            if "@anthropic-ai/claude-code/" in norm or norm.endswith("/claude"):
                return cmd[i + 1 :]
            return None
    return None


def _first_positional(args: tuple[str, ...]) -> str | None:
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            skip = arg in _OPTIONS_WITH_VALUE
            continue
        return arg
    return None
