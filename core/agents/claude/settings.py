"""Claude Code's ``settings.json``: add, find and remove agentbar's hook entries (pure).

The JSON editing (the file's own style kept, one matcher group per event appended after the
user's own, nothing of the user's removed or reordered) is the shared
``hooks/json_settings.py``, which Gemini CLI's ``settings.json`` uses too; here is only what
is Claude's: its handler.
"""

from __future__ import annotations

from typing import Any

from ...hooks import json_settings
from ...hooks.json_settings import (
    Status,
    Style,
    created_keys,
    dump,
    load,
    remove,
    status,
)
from ...hooks.spec import HookCommand
from .events import handlers

__all__ = ["Status", "Style", "add", "created_keys", "dump", "is_current", "load", "remove",
           "status"]  # fmt: skip


def is_current(data: dict[str, Any], command: HookCommand, events: list[str]) -> bool:
    """Exactly agentbar's wanted entries: one group per wanted event holding only the wanted
    handler, and no other agentbar handler anywhere."""
    return json_settings.is_current(data, handlers(command), events)


def add(data: dict[str, Any], command: HookCommand, events: list[str]) -> dict[str, Any]:
    """A copy with agentbar's entries (any earlier ones of agentbar's replaced)."""
    return json_settings.add(data, handlers(command), events)
