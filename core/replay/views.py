"""What a page needs to show a tool call, a slash command or a noisy record well, beyond its
text: diffs, checklists, questions and answers, commands, patterns (pure values; any thread).

The ``view`` of a replay item is structured data, never HTML: the page and the exports render it
their own way. Views are read off a call's input by its shape (``old_string``/``new_string``,
``todos``, ``questions``...), so every agent's edit, todo, question, shell and search tools get
one without a table per agent; a name says only whether ``content`` is a whole new file.

Diffs are computed in ``diffs.py``, bounded: what is cut is marked by a line of kind ``cut``, and
the call's ``input`` still holds everything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from .diffs import DiffKind, DiffLine, patch_diff, unified_diff

T = TypeVar("T")

LIST_ENTRIES = 200  # todos, questions, options, edits of one call
FIELD_CHARS = 4000  # a command, a pattern, a description, a todo's text

# Tools whose ``content`` is a whole file written anew (Claude, Gemini, opencode, Codex-like).
_WRITE_TOOLS = frozenset({"write", "write_file", "create_file", "writefile"})


@dataclass(frozen=True, slots=True)
class Todo:
    content: str
    status: str  # "pending", "in_progress", "completed" (as the agent wrote it)
    active_form: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


@dataclass(frozen=True, slots=True)
class Option:
    label: str
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "description": self.description}


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    header: str | None = None
    multi_select: bool = False
    options: tuple[Option, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "header": self.header,
            "multiSelect": self.multi_select,
            "options": [o.to_json() for o in self.options],
        }


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    answer: str

    def to_json(self) -> dict[str, str]:
        return {"question": self.question, "answer": self.answer}


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemView:
    """The structured parts of an item (each None when it does not apply)."""

    command: str | None = None  # slash command name ("/init"), or a shell call's command
    args: str | None = None  # slash command arguments
    description: str | None = None  # what a shell call or a sub-agent is for, in a few words
    pattern: str | None = None  # search tools
    path: str | None = None  # the file or folder a call is about
    diff: tuple[DiffLine, ...] | None = None
    todos: tuple[Todo, ...] | None = None
    questions: tuple[Question, ...] | None = None
    answers: tuple[Answer, ...] | None = None  # a question tool's result
    folded: bool = False  # a noisy record: show ``summary`` on one line, the text on demand

    def cut(self, limit: int) -> tuple[ItemView, bool]:
        """This view with its lists cut to about ``limit`` characters each, for a page (with
        True when something was cut: the whole item has it all)."""
        diff, cut_diff = _cut_list(self.diff, limit, lambda d: len(d.text))
        if cut_diff and diff is not None:
            diff = (*diff, DiffLine(DiffKind.CUT, "the rest: open the whole item"))
        todos, cut_todos = _cut_list(self.todos, limit, lambda t: len(t.content))
        questions, cut_questions = _cut_list(
            self.questions, limit, lambda q: len(q.question) + sum(len(o.label) for o in q.options)
        )
        if not (cut_diff or cut_todos or cut_questions):
            return self, False
        return replace(self, diff=diff, todos=todos, questions=questions), True

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "args": self.args,
            "description": self.description,
            "pattern": self.pattern,
            "path": self.path,
            "diff": _list(self.diff),
            "todos": _list(self.todos),
            "questions": _list(self.questions),
            "answers": _list(self.answers),
            "folded": self.folded,
        }


def _cut_list(
    values: tuple[T, ...] | None, limit: int, size: Callable[[T], int]
) -> tuple[tuple[T, ...] | None, bool]:
    if values is None:
        return None, False
    total = 0
    for count, value in enumerate(values):
        total += size(value) + 16
        if total > limit:
            return values[:count], True
    return values, False


def _list(values: Sequence[Any] | None) -> list[Any] | None:
    return None if values is None else [v.to_json() for v in values]


EMPTY_VIEW_JSON = ItemView().to_json()


def _text(value: object, limit: int = FIELD_CHARS) -> str | None:
    """A non-blank string field, cut to ``limit``; None for anything else."""
    if isinstance(value, str) and value.strip():
        return value[:limit]
    return None


def _first(args: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        found = _text(args.get(key))
        if found is not None:
            return found
    return None


# -- tool calls ------------------------------------------------------------------------------


def tool_view(name: str | None, tool_input: object) -> ItemView | None:
    """What a tool call's input shows beyond its JSON, or None when nothing."""
    if not isinstance(tool_input, dict):
        return None
    tool = (name or "").lower()
    path = _first(tool_input, "file_path", "filePath", "notebook_path", "path", "absolute_path")
    diff = _edit_diff(tool, tool_input, path)
    todos = _todos(tool_input)
    questions = _questions(tool_input.get("questions"))
    command = _shell_command(tool_input.get("command")) or _text(tool_input.get("cmd"))
    pattern = _first(tool_input, "pattern", "glob_pattern", "regex")
    view = ItemView(
        command=command,
        description=_text(tool_input.get("description")),
        pattern=pattern,
        path=path,
        diff=diff,
        todos=todos,
        questions=questions,
    )
    return None if view == ItemView() else view


def _shell_command(value: object) -> str | None:
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        parts: list[str] = [str(part) for part in value]
        if len(parts) == 3 and parts[0] in ("bash", "sh", "zsh") and parts[1] in ("-lc", "-c"):
            return parts[2][:FIELD_CHARS]  # Codex's ["bash", "-lc", "<script>"]
        return " ".join(parts)[:FIELD_CHARS]
    return _text(value)


def _edit_diff(tool: str, args: Mapping[str, Any], path: str | None) -> tuple[DiffLine, ...] | None:
    old = _str_of(args, "old_string", "oldString")
    new = _str_of(args, "new_string", "newString")
    if old is not None and new is not None:
        return unified_diff([(old, new)], path)
    edits = args.get("edits")
    if isinstance(edits, list) and edits:
        pairs = []
        for edit in edits[:LIST_ENTRIES]:
            if isinstance(edit, dict):
                old = _str_of(edit, "old_string", "oldString")
                new = _str_of(edit, "new_string", "newString")
                if old is not None and new is not None:
                    pairs.append((old, new))
        return unified_diff(pairs, path) if pairs else None
    content = args.get("content")
    if tool in _WRITE_TOOLS and isinstance(content, str):
        return unified_diff([("", content)], path)
    return None


def _str_of(args: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def patch_view(patch: object) -> ItemView | None:
    """An ``apply_patch`` envelope (Codex, opencode) as a view with its diff."""
    diff = patch_diff(patch)
    return None if diff is None else ItemView(diff=diff)


def _todos(args: Mapping[str, Any]) -> tuple[Todo, ...] | None:
    entries = args.get("todos")
    text_key = "content"
    if not isinstance(entries, list):
        entries, text_key = args.get("plan"), "step"  # Codex's update_plan
    if not isinstance(entries, list):
        return None
    todos = []
    for entry in entries[:LIST_ENTRIES]:
        if not isinstance(entry, dict):
            continue
        content = _text(entry.get(text_key))
        if content is None:
            continue
        status = _text(entry.get("status"), 40) or "pending"
        todos.append(Todo(content, status, _text(entry.get("activeForm"))))
    return tuple(todos) if todos else None


def _questions(value: object) -> tuple[Question, ...] | None:
    if not isinstance(value, list):
        return None
    questions = []
    for entry in value[:LIST_ENTRIES]:
        if not isinstance(entry, dict):
            continue
        asked = _text(entry.get("question"))
        if asked is None:
            continue
        options = _options(entry.get("options"))
        multi = entry.get("multiSelect") is True or entry.get("multi_select") is True
        questions.append(Question(asked, _text(entry.get("header"), 200), multi, options))
    return tuple(questions) if questions else None


def _options(value: object) -> tuple[Option, ...]:
    if not isinstance(value, list):
        return ()
    options = []
    for entry in value[:LIST_ENTRIES]:
        if isinstance(entry, str) and entry.strip():
            options.append(Option(entry[:FIELD_CHARS]))
        elif isinstance(entry, dict) and (label := _text(entry.get("label"))) is not None:
            options.append(Option(label, _text(entry.get("description"))))
    return tuple(options)


# -- answers ---------------------------------------------------------------------------------

_ANSWER_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')


def answers_of(result: object, text: str) -> tuple[Answer, ...] | None:
    """The answers a question tool's result gives: its ``answers`` object (Claude's
    ``toolUseResult``), else the ``"question"="answer"`` pairs of its text."""
    answers = result.get("answers") if isinstance(result, dict) else None
    if isinstance(answers, dict) and answers:
        found = [
            Answer(str(q)[:FIELD_CHARS], _answer_text(a))
            for q, a in list(answers.items())[:LIST_ENTRIES]
        ]
        return tuple(found)
    pairs = _ANSWER_PAIR.findall(text[:100_000])
    if not pairs:
        return None
    return tuple(Answer(q, a) for q, a in pairs[:LIST_ENTRIES])


def _answer_text(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)[:FIELD_CHARS]
    return str(value)[:FIELD_CHARS]


# -- folded records --------------------------------------------------------------------------

_SUMMARY_KEYS = (
    "summary", "message", "status", "decision", "outcome", "risk_level", "action", "query",
    "description", "reason", "rationale", "agent_name", "nickname",
)  # fmt: skip
SUMMARY_CHARS = 200


def words_of(name: str) -> str:
    """An adapter's name for a record in words: ``event_msg/guardian_assessment`` ->
    ``"Guardian assessment"``."""
    words = " ".join(name.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ").split())
    return (words[:1].upper() + words[1:])[:80]


def fold_summary(kind: str, record: Mapping[str, Any]) -> str:
    """One short line for a noisy record: what it is, in words, and what its few telling
    fields say (``guardian_assessment`` -> ``"Guardian assessment: approved · low"``)."""
    told = []
    for key in _SUMMARY_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            told.append(" ".join(value.split()))
        elif isinstance(value, dict):
            inner = _first(value, "query", "status", "message")
            if inner:
                told.append(" ".join(inner.split()))
    line = words_of(kind) or "Record"
    if told:
        line += ": " + " · ".join(dict.fromkeys(told))
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
