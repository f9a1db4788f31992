"""Codex's side of the hook route: which hook events hold a request agentbar may answer, and
what the hook prints for the person's answer (pure; any thread).

What Codex 0.171 does, seen on the real CLI (tests/conformance/README.md, "Codex's
PermissionRequest hook"): the PermissionRequest hook runs *before* the approval prompt is drawn
and Codex waits for it, showing only "Working (… esc to interrupt) · Running hook"; keys typed
meanwhile go to the composer, not to an approval. The hook's stdout decides:

    {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                            "decision": {"behavior": "allow"}}}
    {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                            "decision": {"behavior": "deny", "message": "..."}}}

allow runs the command with no prompt; deny shows "Blocked by hook" with the message and the
model is told (the turn goes on); no output, or a hook killed at its ``timeout``, gives no
verdict and the usual prompt is drawn then; exit status 2 denies. ``updatedPermissions`` makes
Codex fail the hook ("unsupported updatedPermissions": no verdict), so "Always allow" is never
offered for Codex. ``request_user_input`` runs PreToolUse and PostToolUse but no
PermissionRequest hook: Codex questions are never held.

Because the wait holds the person's terminal, agentbar holds a Codex request only when the
person opted in (``[answers] codex_hold_seconds`` in settings.toml, written into the installed
hook entry as its bound); the kit itself only reads payloads and writes answers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ...decisions import Decision, RequestKind, Verdict
from ..base import HeldRequest, is_session_id
from .tools import PATCH_TOOL, patched_files

EVENT = "PermissionRequest"
SHELL_TOOL = "Bash"  # how 0.171 names exec_command/shell calls in hook payloads
SUMMARY_CHARS = 300
TOOL_CHARS = 64
MESSAGE_CHARS = 2000


class CodexDecisions:
    def held_request(self, event: str, payload: Mapping[str, object]) -> HeldRequest | None:
        if event != EVENT or payload.get("hook_event_name", EVENT) != EVENT:
            return None
        session_id = payload.get("session_id")
        tool = payload.get("tool_name")
        if not is_session_id(session_id) or not isinstance(tool, str):
            return None
        tool = _one_line(tool)[:TOOL_CHARS]
        if not tool:
            return None
        summary = _summary(tool, payload.get("tool_input"))
        assert isinstance(session_id, str)
        return HeldRequest(session_id, RequestKind.APPROVAL, tool, summary)

    def reply(self, payload: Mapping[str, object], decision: Decision) -> str:
        if decision.verdict is Verdict.ALLOW:
            verdict: dict[str, object] = {"behavior": "allow"}
        elif decision.verdict is Verdict.DENY:
            verdict = {"behavior": "deny"}
            if decision.message:
                verdict["message"] = decision.message[:MESSAGE_CHARS]
        else:  # "always" is never offered for Codex, and no Codex question is held
            return ""
        output = {"hookSpecificOutput": {"hookEventName": EVENT, "decision": verdict}}
        return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def _summary(tool: str, tool_input: object) -> str:
    """What the call would do, on one line: the command, the files a patch touches, the file
    an edit names, or the input as compact JSON."""
    if isinstance(tool_input, Mapping):
        command = tool_input.get("command")
        if isinstance(command, str) and command.strip():
            files = patched_files(command) if tool == PATCH_TOOL or "*** " in command else []
            text = ", ".join(files) if files else command
            return _cut(_one_line(text))
        if isinstance(command, list) and all(isinstance(c, str) for c in command):
            return _cut(_one_line(" ".join(command)))
        for key in ("file_path", "path"):  # an edit under another name (Edit/Write aliases)
            path = tool_input.get(key)
            if isinstance(path, str) and path.strip():
                return _cut(_one_line(path))
    try:
        text = json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return ""
    return _cut(_one_line(text))


def _one_line(text: str) -> str:
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _cut(text: str) -> str:
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


DECISIONS = CodexDecisions()
