"""The Codex hook events agentbar installs, and how Codex names them in its hook keys (pure)."""

from __future__ import annotations

from ...hooks.spec import HookCaller
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
