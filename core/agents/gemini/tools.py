"""What Gemini CLI's tool calls mean to a hand-off: the file ``write_file`` and ``replace``
change, the list ``write_todos`` sets (pure). Replay items name a call as the CLI shows it
("WriteFile", "Edit", "WriteTodos"); the chat's own names are taken too."""

from __future__ import annotations

from ..base import todo_list

FILE_TOOLS = frozenset({"write_file", "replace", "WriteFile", "Edit"})
TODO_TOOLS = frozenset({"write_todos", "WriteTodos"})


class GeminiTools:
    def changed_files(self, name: str, tool_input: object) -> list[str]:
        if name not in FILE_TOOLS or not isinstance(tool_input, dict):
            return []
        path = tool_input.get("file_path")
        return [path] if isinstance(path, str) and path else []

    def todos(self, name: str, tool_input: object) -> list[tuple[str, str]] | None:
        if name not in TODO_TOOLS or not isinstance(tool_input, dict):
            return None
        return todo_list(tool_input.get("todos"), "description")


TOOLS = GeminiTools()
