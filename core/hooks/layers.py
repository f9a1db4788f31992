"""Per-launch settings layers: agentbar's hooks for an agent agentbar starts itself, without
touching the user's files (pure).

Claude Code: ``claude --settings <json>`` adds a settings layer for that run; its hooks merge
with every other source's (agent-formats.md 2.1). It is not restored by ``--resume``: pass it
again on every launch.

Codex: ``-c key=value`` overrides form a session-flags config layer; hooks from all layers run
(4.3). Codex runs a non-managed hook only once it is trusted: either the person trusts
agentbar's session-flag hooks once in ``/hooks`` (the trust is recorded by position and hash, so
the same command stays trusted from launch to launch), or the launcher passes
``--dangerously-bypass-hook-trust`` (``bypass_trust=True``), which must come before any
subcommand, ``--`` or prompt. Codex reads a ``-c`` value as TOML.

    command = HookCommand.current(settings.data_dir)
    subprocess.run(["claude", *claude_launch_args(command), "fix the tests"])
    subprocess.run(["codex", *codex_launch_args(command, bypass_trust=True), "fix the tests"])
"""

from __future__ import annotations

import json
from typing import Any

from agentbar.core.hooks.spec import CODEX_EVENTS, HookCommand, claude_events
from agentbar.core.model import Agent

CODEX_BYPASS_TRUST = "--dangerously-bypass-hook-trust"


def claude_launch_settings(command: HookCommand, *, version: str | None = None) -> dict[str, Any]:
    """The settings layer for ``claude --settings``: agentbar's hooks and nothing else."""
    handler = command.handler(Agent.CLAUDE)
    return {"hooks": {event: [{"hooks": [handler]}] for event in claude_events(version)}}


def claude_launch_args(command: HookCommand, *, version: str | None = None) -> list[str]:
    """``["--settings", "<json>"]`` to put right after ``claude``."""
    layer = claude_launch_settings(command, version=version)
    return ["--settings", json.dumps(layer, separators=(",", ":"), ensure_ascii=False)]


def codex_launch_overrides(
    command: HookCommand, *, notify: bool = False, enable_hooks: bool = False
) -> list[str]:
    """``-c`` overrides, flattened: ``["-c", "hooks.SessionStart=[...]", "-c", ...]``.

    ``notify`` also sets Codex's ``notify`` program for this run (it replaces the user's own for
    the run: only for a Codex without hooks). ``enable_hooks`` sets ``features.hooks`` for a
    Codex that has hooks off."""
    group = {"hooks": [command.handler(Agent.CODEX)]}
    args: list[str] = []
    for event in CODEX_EVENTS:
        args += ["-c", f"hooks.{event}={toml_value([group])}"]
    if enable_hooks:
        args += ["-c", "features.hooks=true"]
    if notify:
        args += ["-c", f"notify={toml_value(command.argv(Agent.CODEX, notify=True))}"]
    return args


def codex_launch_args(
    command: HookCommand,
    *,
    bypass_trust: bool = False,
    notify: bool = False,
    enable_hooks: bool = False,
) -> list[str]:
    """Everything to put right after ``codex`` (before any subcommand or prompt)."""
    args = codex_launch_overrides(command, notify=notify, enable_hooks=enable_hooks)
    return [CODEX_BYPASS_TRUST, *args] if bypass_trust else args


def toml_value(value: object) -> str:
    """A TOML inline value (strings, integers, booleans, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key) and key.isascii()
    return key if bare else json.dumps(key)
