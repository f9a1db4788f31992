"""Builders for Codex rollout lines in the current envelope format (agent-formats.md 3,
real-cli-notes.md): each call returns one line's dict and advances the clock."""

from __future__ import annotations

from typing import Any

import orjson
from claude_lines import T0, iso


class CodexRollout:
    def __init__(
        self,
        session_id: str = "019ad3f1-7c2e-7b10-9a41-5e6f7a8b9c01",
        cwd: str = "/work/web",
        *,
        start: float = T0,
        step: float = 1.0,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.now = start
        self.step = step
        self.turn = 0

    def _line(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.now += self.step
        return {"timestamp": iso(self.now), "type": kind, "payload": payload}

    def meta(self, **extra: Any) -> dict[str, Any]:
        return self._line(
            "session_meta",
            {
                "id": self.session_id,
                "timestamp": iso(self.now),
                "cwd": self.cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.171.0",
                "source": "cli",
                **extra,
            },
        )

    def context(
        self, policy: str = "on-request", sandbox: str = "read-only", mode: str | None = None
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "cwd": self.cwd,
            "approval_policy": policy,
            "sandbox_policy": {"type": sandbox},
            "model": "gpt-5-codex",
        }
        if mode is not None:
            payload["collaboration_mode"] = {"mode": mode, "settings": {"model": "gpt-5-codex"}}
        return self._line("turn_context", payload)

    def event(self, event_type: str, /, **fields: Any) -> dict[str, Any]:
        return self._line("event_msg", {"type": event_type, **fields})

    def started(self) -> dict[str, Any]:
        self.turn += 1
        return self.event("task_started", turn_id=str(self.turn))

    def prompt(self, text: str) -> dict[str, Any]:
        return self.event("user_message", message=text, kind="plain")

    def complete(self, last: str | None, **fields: Any) -> dict[str, Any]:
        return self.event(
            "task_complete", turn_id=str(self.turn), last_agent_message=last, **fields
        )

    def aborted(self, reason: str = "interrupted") -> dict[str, Any]:
        return self.event("turn_aborted", turn_id=str(self.turn), reason=reason)

    def item(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._line("response_item", payload)

    def call(self, name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
        return self.item(
            {
                "type": "function_call",
                "name": name,
                "arguments": orjson.dumps(args).decode(),
                "call_id": call_id,
            }
        )

    def exec(self, cmd: str, call_id: str = "call_1", *, escalate: bool = False) -> dict[str, Any]:
        args: dict[str, Any] = {"cmd": cmd}
        if escalate:
            args.update(sandbox_permissions="require_escalated", justification="needs write access")
        return self.call("exec_command", args, call_id)

    def output(
        self, call_id: str = "call_1", text: str = "Process exited with code 0"
    ) -> dict[str, Any]:
        return self.item({"type": "function_call_output", "call_id": call_id, "output": text})

    def answer(self, text: str, phase: str | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }
        if phase:
            payload["phase"] = phase
        return self.item(payload)

    def reasoning(self, text: str) -> dict[str, Any]:
        return self.item({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]})

    def tokens(self, total_in: int, cached: int, out: int) -> dict[str, Any]:
        """A ``token_count`` with the running total given and, as Codex writes it, the latest
        response's own counts (what the total grew since the previous count)."""
        before = getattr(self, "_total", (0, 0, 0))
        self._total = (total_in, cached, out)
        grown = [max(0, now - then) for now, then in zip(self._total, before, strict=True)]
        usage = {"input_tokens": total_in, "cached_input_tokens": cached, "output_tokens": out}
        last = {
            "input_tokens": grown[0],
            "cached_input_tokens": grown[1],
            "output_tokens": grown[2],
        }
        return self.event(
            "token_count", info={"total_token_usage": usage, "last_token_usage": last}
        )
