"""Gemini CLI's hook events under the names agentbar's state machine reads (pure; runs inside
agentbar's hook program, in Gemini CLI's own hook process: the standard library only).

agentbar's hook program imports this file because Gemini's hook command line says so
(``--translate``, baked in by ``hooks.CALLER``); the program itself names no agent.
"""

from __future__ import annotations

# Gemini CLI's events under the names the other agents' hooks use (the state machine reads
# those). AfterAgent runs after an interrupt or a failed request too, with this text: it says
# nothing of how the turn ended, so it keeps its own name (no change; the chat tells).
GEMINI_EVENTS = {"BeforeAgent": "UserPromptSubmit", "BeforeTool": "PreToolUse",
                 "AfterTool": "PostToolUse", "AfterAgent": "Stop"}  # fmt: skip
GEMINI_NO_RESPONSE = "[no response text]"
# Its ToolPermission notification's ``details.type``: the tool as a person knows it.
GEMINI_CONFIRMS = {"exec": "Shell", "edit": "Edit", "mcp": "MCP", "info": "WebFetch",
                   "ask_user": "ask_user", "exit_plan_mode": "exit_plan_mode"}  # fmt: skip


def translate(event: str, p: dict[str, object]) -> tuple[str, dict[str, object]]:
    """A Gemini CLI event as the others name theirs: its ``Notification`` of type
    ``ToolPermission`` (the confirmation on screen) is a ``PermissionRequest``."""
    if event == "AfterAgent":
        response = _text(p.get("prompt_response"))
        if not response or response == GEMINI_NO_RESPONSE:
            return event, p
        return "Stop", {**p, "last_assistant_message": response}
    if event == "Notification" and p.get("notification_type") == "ToolPermission":
        details = p.get("details")
        details = details if isinstance(details, dict) else {}
        kind = _text(details.get("type"))
        tool = GEMINI_CONFIRMS.get(kind) or _text(details.get("title")) or kind
        keys = ("command", "fileName", "filePath", "toolName", "urls", "prompt")
        what = {key: details.get(key) for key in keys if details.get(key)}
        return "PermissionRequest", {**p, "tool_name": tool, "tool_input": what}
    return GEMINI_EVENTS.get(event, event), p


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
