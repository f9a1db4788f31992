"""Gemini CLI's hook target: agentbar's entries in ``~/.gemini/settings.json`` (main thread).

Gemini CLI reads hooks from ``settings.json`` → ``hooks``, in Claude Code's shape (an event maps
to matcher groups ``{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}``; no
matcher matches every tool), so the JSON editing is the shared ``hooks/json_settings.py``; the
diff, backup, atomic write and exact undo are the agent-neutral ``hooks/installer.py``. What
differs: the event names (agentbar's hook program files them under the names the other agents
use), the timeout is in milliseconds, and ``hooksConfig.enabled: false`` turns every hook off.

The waiting signal is ``Notification`` with ``notification_type: "ToolPermission"``: it runs when
a confirmation (a command, an edit, an ``ask_user`` question) comes up on screen, which the chat
file never shows. Gemini CLI's hooks cannot approve or deny that confirmation; they only tell.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...hooks import json_settings as settings
from ...hooks.files import Record
from ...hooks.spec import TIMEOUT_SECONDS, HookCaller, HookCommand
from ...hooks.target import AgentStatus, Target, command_notes
from ..base import HookEdit, HookRemoval
from .files import AGENT

# The events that say where a turn stands (the model and tool-selection events run several
# times per turn and say nothing the others do not).
# What the hook program needs of Gemini CLI, on the command line agentbar installs: its event
# names translated by this package's own ``gemini_hook_payload.py``.
CALLER = HookCaller(AGENT, translator=Path(__file__).with_name("gemini_hook_payload.py"))

EVENTS = ["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool",
          "Notification"]  # fmt: skip
DISABLED_NOTE = (
    "hooksConfig.enabled is false in this file: Gemini CLI runs no hooks at all, agentbar's "
    "included, until it is set to true or removed."
)


def handler(command: HookCommand) -> dict[str, object]:
    """agentbar's handler as Gemini CLI wants it: the timeout in milliseconds, and a name its
    hook list shows."""
    return {
        "type": "command",
        "command": command.shell(CALLER),
        "timeout": TIMEOUT_SECONDS * 1000,
        "name": "agentbar",
    }


def hooks_disabled(data: dict[str, Any]) -> bool:
    config = data.get("hooksConfig")
    return isinstance(config, dict) and config.get("enabled") is False


class GeminiHooks:
    wants_version = False  # every release with hooks knows these events

    def config_file(self, homes: tuple[Path, ...]) -> Path:
        return homes[0] / "settings.json"

    def add(
        self, text: str | None, where: str, command: HookCommand, *, version: str | None,
        notify: bool,
    ) -> HookEdit:  # fmt: skip
        data, style = settings.load(text, where)
        notes = [DISABLED_NOTE] if hooks_disabled(data) else []
        after, created = settings.added(data, style, handler(command), EVENTS)
        return HookEdit(after, created, len(EVENTS), notes)

    def remove(self, text: str, where: str, record: Record | None) -> HookRemoval:
        data, style = settings.load(text, where)
        return HookRemoval(*settings.removed(data, style, record))

    def status(
        self, target: Target, text: str, command: HookCommand, version: str | None
    ) -> AgentStatus:
        data, _ = settings.load(text, str(target.path))
        found = settings.status(data)
        if not found.events:
            return AgentStatus(target.agent, target, False, "not installed")
        missing = [e for e in EVENTS if e not in found.events]
        summary = f"installed ({len(found.events)} events)"
        if missing:
            summary = f"partly installed ({len(found.events)} events; missing {', '.join(missing)})"
        status = AgentStatus(target.agent, target, True, summary)
        status.notes += command_notes(found.commands, command.shell(CALLER))
        if hooks_disabled(data):
            status.notes.append("hooksConfig.enabled is false: Gemini CLI runs no hooks at all")
        return status


HOOKS = GeminiHooks()
