"""What Codex's tool calls mean to a hand-off: the files an ``apply_patch`` adds, updates or
deletes, the plan ``update_plan`` sets (pure)."""

from __future__ import annotations

from ..base import todo_list

PATCH_TOOL = "apply_patch"
PLAN_TOOL = "update_plan"
_PATCH_VERBS = ("Add", "Update", "Delete")


class CodexTools:
    def changed_files(self, name: str, tool_input: object) -> list[str]:
        if name != PATCH_TOOL:
            return []
        patch = tool_input if isinstance(tool_input, str) else None
        if isinstance(tool_input, dict):
            patch = tool_input.get("input")
        return patched_files(patch) if isinstance(patch, str) else []

    def todos(self, name: str, tool_input: object) -> list[tuple[str, str]] | None:
        if name != PLAN_TOOL or not isinstance(tool_input, dict):
            return None
        return todo_list(tool_input.get("plan"), "step")


def patched_files(patch: str) -> list[str]:
    """The files a patch names (``*** Update File: api/conf.py``), in order."""
    found = []
    for line in patch.splitlines():
        for verb in _PATCH_VERBS:
            prefix = f"*** {verb} File: "
            if line.startswith(prefix):
                found.append(line[len(prefix) :].strip())
    return found


TOOLS = CodexTools()
