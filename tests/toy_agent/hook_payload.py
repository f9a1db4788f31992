"""The toy agent's hook events under the names agentbar's state machine reads (pure; run inside
agentbar's hook program, in the toy's own process: the standard library only).

The toy names its events its own way: ``ask`` (it waits for a yes to run ``what``), ``ran``,
``done`` (with its ``answer``). agentbar's hook program imports this file because the toy's
command line says so (``--translate``); it has never heard of the toy.
"""

from __future__ import annotations

NAMES = {"prompt": "UserPromptSubmit", "ask": "PermissionRequest", "ran": "PostToolUse",
         "done": "Stop"}  # fmt: skip


def translate(event: str, payload: dict[str, object]) -> tuple[str, dict[str, object]]:
    if event == "ask":
        call = {"tool_name": payload.get("tool"), "tool_input": {"command": payload.get("what")}}
        return "PermissionRequest", {**payload, **call}
    if event == "done":
        return "Stop", {**payload, "last_assistant_message": payload.get("answer")}
    return NAMES.get(event, event), payload
