"""The toy agent's hook target: agentbar's commands in ``<home>/hooks.json`` (main thread).

The toy reads ``{"hooks": {"<event>": ["<shell command>", ...]}}`` and runs each command for its
event (its own names: ``prompt``, ``ask``, ``ran``, ``done``) with the event's JSON on stdin,
``TOY_PID`` and ``TOY_SESSION`` set; it wants ``ok`` on stdout from a ``done`` hook. Its
question tool is ``poll`` (``POLL``): the kit's traits say so, and nothing else in agentbar.
Those needs, and the translation of its events into the names agentbar's state machine reads
(``hook_payload.py``), reach agentbar's hook program on the command line (``CALLER``): the hook
program itself has never heard of the toy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentbar.core.agents.base import HookEdit, HookRemoval
from agentbar.core.hooks.errors import HooksFileError
from agentbar.core.hooks.files import Record
from agentbar.core.hooks.spec import HookCaller, HookCommand, is_ours
from agentbar.core.hooks.target import AgentStatus, Target, command_notes
from toy_agent.files import AGENT

EVENTS = ("prompt", "ask", "ran", "done")
POLL = "poll"  # its question tool: an ``ask`` for it waits for the person's answer, not a yes
PID_ENV = "TOY_PID"
SESSION_ENV = "TOY_SESSION"
STOP_REPLY = "ok"
CALLER = HookCaller(
    AGENT,
    pid_env=PID_ENV,
    session_envs=(SESSION_ENV,),
    replies=(("done", STOP_REPLY),),
    translator=Path(__file__).with_name("hook_payload.py"),
)


def _load(text: str | None, where: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise HooksFileError(f"{where} is not valid JSON ({exc})") from None
    hooks = data.get("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise HooksFileError(f"{where} is not a toy hooks file")
    return data


def _without_ours(data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    hooks: dict[str, list[object]] = {}
    removed = 0
    for event, commands in data.get("hooks", {}).items():
        kept = [c for c in commands if not is_ours({"command": c})]
        removed += len(commands) - len(kept)
        if kept:
            hooks[event] = kept
    rest = {k: v for k, v in data.items() if k != "hooks"}
    return ({**rest, "hooks": hooks} if hooks else rest), removed


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


class ToyHooks:
    wants_version = False

    def config_file(self, homes: tuple[Path, ...]) -> Path:
        return homes[0] / "hooks.json"

    def add(
        self, text: str | None, where: str, command: HookCommand, *, version: str | None,
        notify: bool,
    ) -> HookEdit:  # fmt: skip
        data = _load(text, where)
        rest, _ = _without_ours(data)
        created = [] if "hooks" in rest else ["hooks"]
        hooks = rest.setdefault("hooks", {})
        for event in EVENTS:
            hooks.setdefault(event, []).append(command.shell(CALLER))
        if rest == data:
            return HookEdit(None, created, len(EVENTS))
        return HookEdit(_dump(rest), created, len(EVENTS))

    def remove(self, text: str, where: str, record: Record | None) -> HookRemoval:
        data, removed = _without_ours(_load(text, where))
        created = record is not None and record.before_sha256 is None
        return HookRemoval(None if created and not data else _dump(data), removed)

    def status(
        self, target: Target, text: str, command: HookCommand, version: str | None
    ) -> AgentStatus:
        hooks = _load(text, str(target.path)).get("hooks", {})
        ours = {e: [c for c in cs if is_ours({"command": c})] for e, cs in hooks.items()}
        events = [e for e, cs in ours.items() if cs]
        if not events:
            return AgentStatus(target.agent, target, False, "not installed")
        status = AgentStatus(target.agent, target, True, f"installed ({len(events)} events)")
        found = {c for cs in ours.values() for c in cs}
        status.notes += command_notes(found, command.shell(CALLER))
        return status


HOOKS = ToyHooks()
