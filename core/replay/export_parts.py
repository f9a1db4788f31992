"""What a tool call and its result are made of in an export, fenced by what each is: a diff, a
shell command and its output, a file's text in its language, JSON only when it parses as JSON,
a checklist, questions with the answers chosen (pure; any thread).

Markdown and HTML render the same parts (``export.py``); the web replay reads the same views
from the items' JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePosixPath

from .diffs import DiffKind, DiffLine
from .model import ItemKind, ReplayItem, cut_text_to, json_text
from .views import Answer, ItemView, Question, Todo

EXPORT_OUTPUT_CHARS = 20_000  # tool inputs and outputs in Markdown and HTML; JSON has them whole
_JSON_PARSE_CHARS = 2_000_000  # longer outputs are not tried as JSON

_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".json": "json", ".md": "markdown",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".rs": "rust", ".go": "go", ".java": "java",
    ".kt": "kotlin", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".php": "php", ".swift": "swift", ".css": "css",
    ".scss": "scss", ".html": "html", ".htm": "html", ".xml": "xml", ".yaml": "yaml",
    ".yml": "yaml", ".toml": "toml", ".ini": "ini", ".sql": "sql", ".lua": "lua",
    ".diff": "diff", ".patch": "diff", ".txt": "text", ".csv": "csv", ".dockerfile": "dockerfile",
}  # fmt: skip
_READ_TOOLS = frozenset({"read", "read_file", "view", "cat", "notebookread", "readfile"})


@dataclass(frozen=True, slots=True)
class Code:
    """A block of text to fence: ``lang`` is the fence's language ("" for none)."""

    label: str
    text: str
    lang: str
    diff: tuple[DiffLine, ...] = ()  # a diff's own lines, for a writer that marks each


@dataclass(frozen=True, slots=True)
class Checklist:
    todos: tuple[Todo, ...]


@dataclass(frozen=True, slots=True)
class Questions:
    questions: tuple[Question, ...]
    answers: tuple[Answer, ...]


Part = Code | Checklist | Questions


def output(text: str) -> str:
    """``text`` cut to the export's limit, saying how much was left out."""
    shown, cut = cut_text_to(text, EXPORT_OUTPUT_CHARS)
    return shown + (f"\n… ({len(text) - len(shown)} more characters)" if cut else "")


def call_parts(call: ReplayItem, result: ReplayItem | None = None) -> list[Part]:
    """A call's input as a person reads it: its diff, command, checklist or questions (with
    the answers its ``result`` gives), and its whole input as JSON when those do not say
    everything."""
    view = call.view or ItemView()
    parts: list[Part] = []
    if view.command and call.kind is ItemKind.TOOL_CALL:
        parts.append(Code("Command", output("$ " + view.command), "console"))
    if view.diff:
        parts.append(Code("Diff", output(diff_text(view.diff)), "diff", view.diff))
    if view.todos:
        parts.append(Checklist(view.todos))
    if view.questions:
        answers = result.view.answers if result is not None and result.view else None
        parts.append(Questions(view.questions, answers or ()))
    if not parts and call.input is not None:
        text = call.input if isinstance(call.input, str) else json_text(call.input)
        parts.append(Code("Input", output(text), "" if isinstance(call.input, str) else "json"))
    return parts


def result_parts(call: ReplayItem | None, result: ReplayItem) -> list[Part]:
    """A result fenced by what it is; answers its call's questions do not show already."""
    parts: list[Part] = []
    view = result.view or ItemView()
    asked = call is not None and call.view is not None and bool(call.view.questions)
    if view.answers and not asked:
        parts.append(Questions((), view.answers))
    parts.append(Code("Result", output(result.text), result_language(call, result.text)))
    return parts


def result_language(call: ReplayItem | None, text: str) -> str:
    """``json`` only for text that parses as JSON; ``console`` for a command's output; a
    file's language for what a read tool read; ``text`` otherwise."""
    if _is_json(text):
        return "json"
    view = call.view if call is not None else None
    if view is not None and view.command:
        return "console"
    name = (call.name or "").lower() if call is not None else ""
    if view is not None and view.path and name in _READ_TOOLS:
        return language_of(view.path)
    return "text"


def language_of(path: str) -> str:
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    if name == "dockerfile":
        return "dockerfile"
    return _LANGUAGES.get(PurePosixPath(name).suffix, "text")


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or len(stripped) > _JSON_PARSE_CHARS:
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


_DIFF_MARKS = {DiffKind.ADD: "+", DiffKind.DEL: "-", DiffKind.CONTEXT: " "}


def diff_text(lines: tuple[DiffLine, ...]) -> str:
    """Diff lines as unified diff text (a file line as ``+++ path``, a cut as ``…``)."""
    return "\n".join(diff_line_text(line) for line in lines)


def diff_line_text(line: DiffLine) -> str:
    text = " ".join(line.text.splitlines()) if "\n" in line.text else line.text
    if line.kind is DiffKind.FILE:
        return f"+++ {text}"
    if line.kind is DiffKind.HUNK:
        return text
    if line.kind is DiffKind.CUT:
        return f"… {text}"
    return _DIFF_MARKS[line.kind] + text


def todo_mark(todo: Todo) -> str:
    return {"completed": "x", "in_progress": "~"}.get(todo.status, " ")
