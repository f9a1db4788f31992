"""What opencode's tool calls mean to a hand-off: the file ``edit`` and ``write`` change, the
files an ``apply_patch`` names, the list ``todowrite`` sets (pure). Input names as opencode
1.18.33 offers its tools to the model (``filePath``; ``todos`` of ``content`` and ``status``)."""

from __future__ import annotations

from ..base import todo_list

FILE_TOOLS = frozenset({"edit", "write", "multiedit"})
PATCH_TOOLS = frozenset({"apply_patch", "patch"})
TODO_TOOL = "todowrite"


class OpencodeTools:
    def changed_files(self, name: str, tool_input: object) -> list[str]:
        if not isinstance(tool_input, dict):
            return []
        if name in FILE_TOOLS:
            path = tool_input.get("filePath")
            return [path] if isinstance(path, str) and path else []
        if name in PATCH_TOOLS:
            patch = tool_input.get("patchText") or tool_input.get("input")
            return patched_files(patch) if isinstance(patch, str) else []
        return []

    def todos(self, name: str, tool_input: object) -> list[tuple[str, str]] | None:
        if name != TODO_TOOL or not isinstance(tool_input, dict):
            return None
        return todo_list(tool_input.get("todos"), "content")


def patched_files(patch: str) -> list[str]:
    """The files an ``apply_patch`` envelope names (``*** Update File: api/conf.py``). The
    same envelope as Codex's (``agents/codex/tools.py``); agent packages import no other."""
    found = []
    for line in patch.splitlines():
        for verb in ("Add", "Update", "Delete"):
            prefix = f"*** {verb} File: "
            if line.startswith(prefix):
                found.append(line[len(prefix) :].strip())
    return found


TOOLS = OpencodeTools()
