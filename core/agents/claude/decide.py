"""Claude Code's side of the hook route: which ``PermissionRequest`` payloads hold a request
agentbar may answer, and the JSON its hook prints to give Claude the person's answer (pure, any
thread).

Claude Code 2.0.45 and later run the ``PermissionRequest`` hook when they are about to ask (in
the main session, alongside the terminal's own dialog: the first answer wins). Its payload has
``session_id``, ``tool_name``, ``tool_input`` and, from 2.0.54, ``permission_suggestions``: what
the dialog's "Yes, and don't ask again" would add. The hook decides by printing::

    {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
      "decision": {"behavior": "allow", "updatedPermissions": [...]}}}
    {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
      "decision": {"behavior": "deny", "message": "..."}}}

Claude still applies its deny rules after an "allow". "Always allow" echoes the suggestions
with ``destination: "session"``: the rule holds for this session, no settings file is written.
``AskUserQuestion`` comes through the same hook; an "allow" whose ``updatedInput`` carries
``answers`` (question text -> the chosen label(s), comma-separated) answers it, the way Claude's
own SDK hosts answer it.

Everything read from a payload is checked for its type and cut to size: a payload that is odd
anywhere holds no request (``held_request`` returns None and the terminal dialog stays in
charge). Nothing here approves anything on its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ...decisions import Decision, Question, RequestKind, Verdict
from ..base import HeldRequest, is_session_id

EVENT = "PermissionRequest"
QUESTION_TOOL = "AskUserQuestion"
MAX_TOOL_CHARS = 128
MAX_SUMMARY_CHARS = 300
MAX_RULE_CHARS = 500
MAX_QUESTIONS = 8
MAX_OPTIONS = 16
MAX_TEXT_CHARS = 2000
DEFAULT_DENIAL = "The person denied this from agentbar."
# Which field of a tool's input says what the call would do, in order of preference.
SUMMARY_KEYS = ("command", "file_path", "notebook_path", "path", "url", "query", "pattern",
                "description", "prompt", "skill")  # fmt: skip
# What each kind of permission update says, for the rule shown on the button.
MODE_NAMES = {
    "acceptEdits": "accept edits",
    "bypassPermissions": "bypass permissions",
    "plan": "plan mode",
    "default": "ask as usual",
}


class ClaudeDecisions:
    """``HookDecisions`` for Claude Code."""

    def held_request(self, event: str, payload: Mapping[str, object]) -> HeldRequest | None:
        if event != EVENT or payload.get("hook_event_name") != EVENT:
            return None
        session_id = payload.get("session_id")
        tool = payload.get("tool_name")
        tool_input = payload.get("tool_input")
        if not (is_session_id(session_id) and isinstance(tool, str) and tool):
            return None
        if len(tool) > MAX_TOOL_CHARS or not tool.isprintable():
            return None
        if not isinstance(tool_input, dict):
            return None
        assert isinstance(session_id, str)
        if tool == QUESTION_TOOL:
            questions = _questions(tool_input)
            if not questions:
                return None
            return HeldRequest(
                session_id, RequestKind.QUESTION, tool, _cut(questions[0].text, MAX_SUMMARY_CHARS),
                questions=questions,
            )  # fmt: skip
        return HeldRequest(
            session_id,
            RequestKind.APPROVAL,
            tool,
            summary(tool_input),
            always_rule=always_rule(payload.get("permission_suggestions")),
        )

    def reply(self, payload: Mapping[str, object], decision: Decision) -> str:
        verdict = decision.verdict
        body: dict[str, object]
        if verdict is Verdict.DENY:
            body = {"behavior": "deny", "message": decision.message or DEFAULT_DENIAL}
        elif verdict is Verdict.ALLOW:
            body = {"behavior": "allow"}
        elif verdict is Verdict.ALLOW_ALWAYS:
            updates = session_updates(payload.get("permission_suggestions"))
            if not updates:
                return ""  # nothing to add after all: no decision rather than a lesser one
            body = {"behavior": "allow", "updatedPermissions": updates}
        else:  # Verdict.REPLY
            updated = answered_input(payload.get("tool_input"), decision.replies)
            if updated is None:
                return ""
            body = {"behavior": "allow", "updatedInput": updated}
        output = {"hookSpecificOutput": {"hookEventName": EVENT, "decision": body}}
        return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def summary(tool_input: Mapping[str, object]) -> str:
    """One line saying what the call would do: its command, its file, its address."""
    for key in SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _cut(_one_line(value), MAX_SUMMARY_CHARS)
    return ""


def always_rule(suggestions: object) -> str | None:
    """What "Always allow" would add, as Claude writes rules (``Bash(npm test:*)``; a mode:
    ``mode: accept edits``; a folder: ``directory /srv/app``), several joined by ``; ``. None
    when the payload offers nothing usable."""
    updates = _suggestions(suggestions)
    if updates is None:
        return None
    said = [_said(update) for update in updates]
    text = "; ".join(s for s in said if s)
    return _cut(text, MAX_RULE_CHARS) if text else None


def session_updates(suggestions: object) -> list[dict[str, object]]:
    """The suggestions as the permission updates "Always allow" gives: each one as Claude sent
    it, held for this session only (no settings file is written)."""
    updates = _suggestions(suggestions)
    return [] if updates is None else [{**u, "destination": "session"} for u in updates]


def answered_input(tool_input: object, replies: tuple[str, ...]) -> dict[str, object] | None:
    """``AskUserQuestion``'s input with the person's answers: ``answers`` maps each question's
    text to its reply. None when the input is not a question's or the replies do not fit."""
    if not isinstance(tool_input, dict):
        return None
    questions = _questions(tool_input)
    if not questions or len(replies) != len(questions):
        return None
    texts = [entry["question"] for entry in tool_input["questions"]]  # as sent, uncut
    answers = {text: reply for text, reply in zip(texts, replies, strict=True)}
    return {**tool_input, "answers": answers}


# -- reading the payload ------------------------------------------------------------------------


def _suggestions(suggestions: object) -> list[dict[str, object]] | None:
    """The suggested updates, when every one is of a shape Claude knows (one odd entry, and
    "always" is not offered: echoing what we cannot read is echoing what we cannot show)."""
    if not isinstance(suggestions, list) or not 0 < len(suggestions) <= MAX_OPTIONS:
        return None
    updates = []
    for entry in suggestions:
        if not isinstance(entry, dict) or not _said(entry):
            return None
        updates.append(dict(entry))
    return updates


def _said(update: Mapping[str, object]) -> str:
    """One update in words, or "" when it is of no shape Claude documents."""
    kind = update.get("type")
    if kind in ("addRules", "replaceRules"):
        if update.get("behavior") != "allow":
            return ""
        return _rules(update.get("rules"))
    if kind == "setMode":
        mode = update.get("mode")
        return f"mode: {MODE_NAMES[mode]}" if isinstance(mode, str) and mode in MODE_NAMES else ""
    if kind == "addDirectories":
        folders = update.get("directories")
        if not isinstance(folders, list) or not folders:
            return ""
        if not all(isinstance(f, str) and f and f.isprintable() for f in folders):
            return ""
        return "directory " + ", ".join(str(f) for f in folders)
    return ""


def _rules(rules: object) -> str:
    if not isinstance(rules, list) or not 0 < len(rules) <= MAX_OPTIONS:
        return ""
    said = []
    for rule in rules:
        if not isinstance(rule, dict):
            return ""
        tool, content = rule.get("toolName"), rule.get("ruleContent")
        if not isinstance(tool, str) or not tool or not tool.isprintable():
            return ""
        if content is None:
            said.append(tool)
        elif isinstance(content, str) and content.isprintable():
            said.append(f"{tool}({content})")
        else:
            return ""
    return ", ".join(said)


def _questions(tool_input: Mapping[str, object]) -> tuple[Question, ...]:
    raw = tool_input.get("questions")
    if not isinstance(raw, list) or not 0 < len(raw) <= MAX_QUESTIONS:
        return ()
    questions = []
    for entry in raw:
        if not isinstance(entry, dict):
            return ()
        text, header = entry.get("question"), entry.get("header", "")
        options = entry.get("options", [])
        multiple = entry.get("multiSelect", False)
        if not (isinstance(text, str) and text.strip() and isinstance(header, str)):
            return ()
        if not isinstance(options, list) or len(options) > MAX_OPTIONS:
            return ()
        labels = [o.get("label") if isinstance(o, dict) else None for o in options]
        if not all(isinstance(label, str) and label for label in labels):
            return ()
        questions.append(
            Question(
                _cut(text, MAX_TEXT_CHARS),
                _cut(header, MAX_SUMMARY_CHARS),
                tuple(_cut(str(label), MAX_SUMMARY_CHARS) for label in labels),
                multiple is True,
            )
        )
    if len({entry["question"] for entry in raw}) != len(questions):
        return ()  # answers are keyed by the question's text: two alike cannot both be answered
    return tuple(questions)


def _one_line(text: str) -> str:
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line:
            return line
    return ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


DECISIONS = ClaudeDecisions()
