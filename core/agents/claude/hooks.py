"""Claude Code's hook target: agentbar's entries in ``<config dir>/settings.json`` (main thread).

The JSON editing is ``settings.py``; the diff, backup, atomic write and exact undo are the
agent-neutral ``hooks/installer.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...hooks import json_settings
from ...hooks.files import Record
from ...hooks.spec import HookCommand, is_ours
from ...hooks.target import AgentStatus, Target, command_notes
from ..base import HookEdit, HookRemoval
from . import settings
from .events import CALLER, HOLD_CALLER, HOLD_EVENT, claude_events, commands, handlers

DISABLED_NOTE = (
    "disableAllHooks is true in this file: Claude Code runs no hooks at all, agentbar's "
    "included, until it is removed."
)


class ClaudeHooks:
    wants_version = True  # Claude validates its settings: an unknown event is left out

    def config_file(self, homes: tuple[Path, ...]) -> Path:
        return homes[0] / "settings.json"

    def add(
        self, text: str | None, where: str, command: HookCommand, *, version: str | None,
        notify: bool,
    ) -> HookEdit:  # fmt: skip
        data, style = settings.load(text, where)
        events = claude_events(version)
        notes = [DISABLED_NOTE] if settings.status(data).all_disabled else []
        after, created = json_settings.added(data, style, handlers(command), events)
        return HookEdit(after, created, len(events), notes)

    def remove(self, text: str, where: str, record: Record | None) -> HookRemoval:
        data, style = settings.load(text, where)
        return HookRemoval(*json_settings.removed(data, style, record))

    def status(
        self, target: Target, text: str, command: HookCommand, version: str | None
    ) -> AgentStatus:
        data, _ = settings.load(text, str(target.path))
        found = settings.status(data)
        wanted = claude_events(version)
        if not found.events:
            return AgentStatus(target.agent, target, False, "not installed")
        missing = [e for e in wanted if e not in found.events]
        summary = f"installed ({len(found.events)} events)"
        if missing:
            summary = f"partly installed ({len(found.events)} events; missing {', '.join(missing)})"
        status = AgentStatus(target.agent, target, True, summary)
        status.notes += command_notes(found.commands, command.shell(CALLER), commands(command))
        said = any(note.startswith("outdated") for note in status.notes)
        if HOLD_EVENT in found.events and not said and not _holds(data, command):
            status.notes.append(
                f"outdated: the {HOLD_EVENT} entry cannot hand requests to agentbar (written "
                "before approving from agentbar; run `agentbar hooks install` to update it)"
            )
        if found.all_disabled:
            status.notes.append("disableAllHooks is true: Claude Code runs no hooks at all")
        return status


def _holds(data: dict[str, Any], command: HookCommand) -> bool:
    """Whether agentbar's handler for the holding event is the one that holds."""
    groups = data.get("hooks", {}).get(HOLD_EVENT)
    wanted = command.shell(HOLD_CALLER)
    ours = [
        handler.get("command")
        for group in (groups if isinstance(groups, list) else [])
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
        if is_ours(handler)
    ]
    return wanted in ours


HOOKS = ClaudeHooks()
