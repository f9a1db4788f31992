"""What Claude Code's tool calls mean to a hand-off: the files Edit, MultiEdit, Write and
NotebookEdit change, the todo list TodoWrite sets (pure)."""

from __future__ import annotations

from ..base import todo_list
from .transcript import TODO_TOOL

# The input field that names the file, per editing tool.
EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
              "NotebookEdit": "notebook_path"}  # fmt: skip


class ClaudeTools:
    def changed_files(self, name: str, tool_input: object) -> list[str]:
        field = EDIT_TOOLS.get(name)
        if field is None or not isinstance(tool_input, dict):
            return []
        path = tool_input.get(field)
        return [path] if isinstance(path, str) and path else []

    def todos(self, name: str, tool_input: object) -> list[tuple[str, str]] | None:
        if name != TODO_TOOL or not isinstance(tool_input, dict):
            return None
        return todo_list(tool_input.get("todos"), "content")


TOOLS = ClaudeTools()
