"""The command line and environment a task starts its agent with (pure).

New, resume and fork, for either agent (agent-formats.md 5), with agentbar's hooks as a
per-launch layer (``core/hooks/layers.py``: the user's settings files stay untouched):

    claude --settings <json> [--session-id <uuid>] [--resume <id> [--fork-session]] [prompt]
    codex [--dangerously-bypass-hook-trust] -c hooks.<Event>=... [resume|fork <id>] [prompt]

A new Claude session (and, from 2.0.73, a fork) gets its id from us (``--session-id``), the
fastest binding there is; every ``claude`` from 1.0.128 (the oldest checked) takes the flag, and
a version we could not read gets none. No shell is involved: every value is one argv element.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from agentbar.core.errors import LaunchError
from agentbar.core.hooks.layers import claude_launch_args, codex_launch_args
from agentbar.core.hooks.spec import CODEX_HOOKS_DEFAULT_ON, HookCommand, parse_version
from agentbar.core.model import Agent

SESSION_ID_SINCE = (1, 0, 128)  # the oldest Claude seen to take --session-id
FORK_SESSION_ID_SINCE = (2, 0, 73)  # --session-id names the fork from here on
CLAUDE_SETTINGS_SINCE = (1, 0, 61)  # --settings
MAX_PROMPT_CHARS = 100_000  # one argv element may not exceed 128 KiB on Linux
# Variables that describe the session agentbar itself may run in: a child must not inherit them
# (Claude would think it runs nested; the hook program would read the wrong session).
INHERITED_SESSION_VARS = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_PID",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
)
TASK_ENV = "AGENTBAR_TASK_ID"


class Mode(StrEnum):
    NEW = "new"
    RESUME = "resume"
    FORK = "fork"


class BadLaunch(LaunchError, ValueError):
    """A launch that cannot be made (the message says why, for the person who asked)."""

    title = "Cannot launch the agent"


@dataclass(frozen=True, slots=True)
class LaunchRequest:
    agent: Agent
    project: str  # an absolute folder
    prompt: str | None = None
    mode: Mode = Mode.NEW
    source: str | None = None  # the session resumed or forked

    def __post_init__(self) -> None:
        if (self.mode is Mode.NEW) != (self.source is None):
            raise BadLaunch("resume and fork need a session; a new launch takes none")
        if self.prompt is not None and len(self.prompt) > MAX_PROMPT_CHARS:
            raise BadLaunch(f"the prompt is longer than {MAX_PROMPT_CHARS} characters")
        if self.prompt is not None and "\x00" in self.prompt:
            raise BadLaunch("the prompt contains a NUL character")


@dataclass(frozen=True, slots=True)
class Program:
    """How to run one agent here: its argv prefix (``("claude",)``, or a test's fake agent) and
    the version ``--version`` printed (None: unknown)."""

    argv: tuple[str, ...]
    version: str | None = None

    @property
    def parsed_version(self) -> tuple[int, ...] | None:
        return parse_version(self.version)


@dataclass(frozen=True, slots=True)
class CommandLine:
    argv: tuple[str, ...]
    session_id: str | None  # the id we gave the session (None: the agent picks one)


def preassigned_id(request: LaunchRequest, program: Program) -> str | None:
    """A fresh session id for Claude versions that take ``--session-id`` for this launch."""
    version = program.parsed_version
    if request.agent is not Agent.CLAUDE or version is None:
        return None
    if request.mode is Mode.NEW and version >= SESSION_ID_SINCE:
        return str(uuid.uuid4())
    if request.mode is Mode.FORK and version >= FORK_SESSION_ID_SINCE:
        return str(uuid.uuid4())
    return None


def command_line(
    request: LaunchRequest,
    program: Program,
    *,
    hooks: HookCommand | None,
    session_id: str | None = None,
    codex_bypass_trust: bool = False,
) -> CommandLine:
    """The argv for ``request``. ``hooks``: agentbar's hook layer (None: none); ``session_id``:
    an id from ``preassigned_id``; ``codex_bypass_trust``: run Codex's session-flag hooks
    without review (only where the hook set is known: see ``layers.py``)."""
    if request.agent is Agent.CLAUDE:
        argv = [*program.argv, *_claude_args(request, program, hooks, session_id)]
    else:
        argv = [*program.argv, *_codex_args(request, program, hooks, codex_bypass_trust)]
    if request.prompt:
        if request.prompt.startswith("-"):
            argv.append("--")  # a prompt is never an option
        argv.append(request.prompt)
    return CommandLine(argv=tuple(argv), session_id=session_id)


def _claude_args(
    request: LaunchRequest, program: Program, hooks: HookCommand | None, session_id: str | None
) -> list[str]:
    args: list[str] = []
    version = program.parsed_version
    if hooks is not None and (version is None or version >= CLAUDE_SETTINGS_SINCE):
        args += claude_launch_args(hooks, version=program.version)
    if session_id is not None:
        args += ["--session-id", session_id]
    if request.mode is not Mode.NEW:
        assert request.source is not None
        args += ["--resume", request.source]
        if request.mode is Mode.FORK:
            args.append("--fork-session")
    return args


def _codex_args(
    request: LaunchRequest, program: Program, hooks: HookCommand | None, bypass_trust: bool
) -> list[str]:
    args: list[str] = []
    version = program.parsed_version
    if hooks is not None:
        args += codex_launch_args(
            hooks,
            bypass_trust=bypass_trust and version is not None,
            version=program.version,
            enable_hooks=version is not None and version < CODEX_HOOKS_DEFAULT_ON,
        )
    if request.mode is not Mode.NEW:
        assert request.source is not None
        args += [str(request.mode), request.source]  # "resume <id>" / "fork <id>"
    return args


def child_env(
    base: Mapping[str, str], task_id: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The agent's environment: ours, as a terminal would pass it, without the variables of a
    session agentbar itself might run in, plus the task's id (for the person's own scripts)."""
    env = {k: v for k, v in base.items() if k not in INHERITED_SESSION_VARS}
    env.setdefault("TERM", "xterm-256color")
    if env["TERM"] in ("", "dumb"):
        env["TERM"] = "xterm-256color"
    env.setdefault("COLORTERM", "truecolor")
    env[TASK_ENV] = task_id
    env.update(extra or {})
    return env
