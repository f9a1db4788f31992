"""The Claude Code hook events agentbar installs, by the version that has each (pure)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ...hooks.spec import HookCaller, HookCommand, parse_version
from .files import AGENT

# What the hook program needs of Claude Code, on the command line agentbar installs: the pid
# Claude gives its hooks, and the session id it sets when a payload carries none.
CALLER = HookCaller(AGENT, pid_env="CLAUDE_PID", session_envs=("CLAUDE_CODE_SESSION_ID",))

# The event whose hook can decide (2.0.45+): it hands the request to the running agentbar and
# waits for the person's answer (in the main session the terminal's own dialog stays usable
# meanwhile: Claude takes the first answer). Claude's own default timeout for a hook is 600 s;
# the hold ends first, with no decision, and Claude's timeout is only the backstop.
HOLD_EVENT = "PermissionRequest"
HOLD_SECONDS = 600
HOLD_TIMEOUT_SECONDS = HOLD_SECONDS + 30
HOLD_CALLER = replace(CALLER, holds=(HOLD_EVENT,), hold_seconds=HOLD_SECONDS)

# Claude Code events and the first version that has each (agent-formats.md 2.5 and 6). Claude
# validates its settings, so an event an older build does not know is left out for that build.
CLAUDE_EVENTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("SessionStart", (1, 0, 62)),
    ("UserPromptSubmit", (1, 0, 54)),
    ("PreToolUse", (1, 0, 38)),
    ("PostToolUse", (1, 0, 38)),
    ("PostToolUseFailure", (2, 1, 33)),  # between 2.1.10 and 2.1.33; the later, to be safe
    ("PermissionRequest", (2, 0, 45)),
    ("Notification", (1, 0, 38)),
    ("Stop", (1, 0, 38)),
    ("StopFailure", (2, 1, 78)),
    ("SubagentStop", (1, 0, 41)),
    ("SessionEnd", (1, 0, 85)),
)


def claude_events(version: str | None) -> list[str]:
    """The events to hook for this Claude Code version (all of them when it is unknown)."""
    parsed = parse_version(version)
    return [name for name, first in CLAUDE_EVENTS if parsed is None or parsed >= first]


def caller_for(event: str) -> HookCaller:
    """The command line agentbar installs for ``event``."""
    return HOLD_CALLER if event == HOLD_EVENT else CALLER


def handlers(command: HookCommand) -> Callable[[str], dict[str, object]]:
    """agentbar's handler for each Claude event: the holding one waits long, the rest 5 s."""

    def handler(event: str) -> dict[str, object]:
        if event == HOLD_EVENT:
            return command.handler(HOLD_CALLER, HOLD_TIMEOUT_SECONDS)
        return command.handler(CALLER)

    return handler


def commands(command: HookCommand) -> frozenset[str]:
    """Every command line agentbar installs for Claude."""
    return frozenset({command.shell(CALLER), command.shell(HOLD_CALLER)})
