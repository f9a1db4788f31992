"""The Codex hook events agentbar installs, and how Codex names them in its hook keys (pure)."""

from __future__ import annotations

import dataclasses

from ...hooks.spec import TIMEOUT_SECONDS, HookCaller, HookCommand
from .files import AGENT

# What the hook program needs of Codex, on the command line agentbar installs: Codex parses a
# Stop hook's stdout as its JSON contract and "{}" is the no-op answer (some versions fail the
# hook on empty output); the thread id it sets when a payload (or notify) carries none.
CALLER = HookCaller(
    AGENT,
    session_envs=("CODEX_THREAD_ID",),
    replies=(("Stop", "{}"), ("SubagentStop", "{}")),
)

# Codex events (agent-formats.md 4.3). Codex ignores hook events it does not know (its hooks
# table has no deny_unknown_fields), so the newer ones are written for every version and start
# working when Codex does.
CODEX_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "SessionEnd",
    "Interrupt",
    "StopFailure",
)
CODEX_HOOKS_DEFAULT_ON = (0, 124, 0)  # hooks on by default from here; before, [features]


def codex_event_label(event: str) -> str:
    """Codex's label for an event in its hook keys: ``PreToolUse`` -> ``pre_tool_use``."""
    out: list[str] = []
    for i, char in enumerate(event):
        if char.isupper() and i:
            out.append("_")
        out.append(char.lower())
    return "".join(out)


# The one event whose hook may hold Codex for an answer from agentbar (decisions.py): only when
# the person opted in (``[answers] codex_hold_seconds``), and never longer than that.
HELD_EVENT = "PermissionRequest"


def handler(command: HookCommand, event: str) -> dict[str, object]:
    """agentbar's handler for ``event``: PermissionRequest's carries the person's hold (the
    hook program's ``--hold PermissionRequest --hold-seconds N``, and Codex's own ``timeout``
    5 s past it, which ends a hook that overstays and draws the usual prompt); every other
    event's is the plain one."""
    hold = command.hold_for(CALLER.agent) if event == HELD_EVENT else 0
    if not hold:
        return command.handler(CALLER)
    held = dataclasses.replace(CALLER, holds=(HELD_EVENT,), hold_seconds=hold)
    return command.handler(held, hold + TIMEOUT_SECONDS)
